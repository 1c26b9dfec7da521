# SPDX-License-Identifier: BSD-3-Clause
"""Corpus files written by netCDF4-python (netCDF-4 on HDF5: dimension scales, creation order, _Netcdf4*).

- netcdf-met: NETCDF4 format.  Dimensions time (unlimited, the record dimension), station (the SAME
  length as time, so only the dimension scales, not the lengths, tell the record variables apart), level
  (no coordinate variable: netCDF stores a bare dimension scale).  Variables time(time) with units and
  calendar, temp(time, station, level) float32 zlib+shuffle with _FillValue and a string-array (NC_STRING)
  attribute, label(time) variable-length strings, station(station) and elev(station) (not records), a
  group /obs with its own dimension nobs and variable code(nobs), and pressure(time) on the parent's
  record dimension; global attributes (title, history, Conventions, numbers, an NC_STRING list).
  Records: time, temp, label, obs/pressure.
- netcdf-classic: NETCDF4_CLASSIC format (what most tools that "write netCDF-4" produce): time unlimited
  (records time, temp(time, station) zlib, pres(time), rh(time)) and station (lat, lon) of another length.

- netcdf-recdim: NETCDF4 format.  An unlimited dimension rec with no coordinate variable (netCDF stores a
  dimension scale that is no variable: a float dataset of shape (0,), extendible, never written, its NAME
  "This is a netCDF dimension but not a netCDF variable"), and ce(rec) int32, dd(rec, n) float64 zlib on
  it; n (3) has no coordinate variable either.  Records: ce, dd (not rec: it holds no rows).
- netcdf-fixdim: NETCDF4 format.  The record dimension sample (7) has no coordinate variable, so its scale
  has sample's length but no data: X(sample, f) float32 and y(sample) int64 are the records, the scale is
  copied as it is (never written).

The netCDF-level checks (ncdump -h, netCDF4-python reading the output) use "nc_records": the variables
whose first dimension is the record dimension, which must follow one permutation with the time coordinate.
"""

import os

import numpy as np

try:
    import netCDF4
except ImportError:  # the runner reports the skip
    netCDF4 = None

MISSING = None if netCDF4 else "python3-netcdf4 is not installed (netCDF4-python)"


def _met(d):
    path = os.path.join(d, "netcdf-met.nc")
    rng = np.random.default_rng(11)
    n = 48
    ds = netCDF4.Dataset(path, "w", format="NETCDF4")
    ds.title = "station temperatures"
    ds.history = "2024-06-01 created by gen_netcdf.py"
    ds.Conventions = "CF-1.8"
    ds.version = np.int32(3)
    ds.bounds = np.array([-1.5, 2.5], dtype=np.float64)
    ds.setncattr_string("keywords", ["temperature", "station", "unlimited"])
    ds.createDimension("time", None)
    ds.createDimension("station", n)
    ds.createDimension("level", 4)
    t = ds.createVariable("time", "f8", ("time",))
    t.units = "hours since 2000-01-01 00:00:00"
    t.calendar = "standard"
    t.standard_name = "time"
    st = ds.createVariable("station", "i4", ("station",))
    st.long_name = "station id"
    temp = ds.createVariable("temp", "f4", ("time", "station", "level"), zlib=True, complevel=4, shuffle=True,
                             fill_value=np.float32(-999.0))
    temp.units = "K"
    temp.long_name = "air temperature"
    temp.setncattr_string("comment", ["measured", "quality controlled"])
    temp.valid_range = np.array([150, 350], dtype=np.float32)
    label = ds.createVariable("label", str, ("time",))
    label.long_name = "observer's note"
    elev = ds.createVariable("elev", "f4", ("station",))
    elev.units = "m"
    obs = ds.createGroup("obs")
    obs.source = "synthetic"
    obs.createDimension("nobs", 5)
    code = obs.createVariable("code", "i4", ("nobs",))
    code.flag_meanings = "a b c d e"
    pres = obs.createVariable("pressure", "f4", ("time",), zlib=True)
    pres.units = "hPa"

    t[:] = np.arange(n) * 6.0
    st[:] = 1000 + np.arange(n)
    temp[:] = (250 + 30 * rng.random((n, n, 4))).astype(np.float32)
    temp[3, 5, 1] = np.float32(-999.0)
    for i in range(n):
        label[i] = "note %d %s" % (i, "x" * (i % 7))
    elev[:] = rng.random(n).astype(np.float32) * 3000
    code[:] = np.arange(5) * 11
    pres[:] = (1000 + rng.standard_normal(n)).astype(np.float32)
    ds.close()
    return {"name": "netcdf-met", "file": path, "records": ["/time", "/temp", "/label", "/obs/pressure"],
            "nc_records": ["/time", "/temp", "/label", "/obs/pressure"]}


def _classic(d):
    path = os.path.join(d, "netcdf-classic.nc")
    rng = np.random.default_rng(12)
    n, s = 30, 5
    ds = netCDF4.Dataset(path, "w", format="NETCDF4_CLASSIC")
    ds.title = "classic model"
    ds.institution = "nowhere"
    ds.createDimension("time", None)
    ds.createDimension("station", s)
    t = ds.createVariable("time", "f8", ("time",))
    t.units = "days since 1970-01-01"
    lat = ds.createVariable("lat", "f4", ("station",))
    lat.units = "degrees_north"
    lon = ds.createVariable("lon", "f4", ("station",))
    lon.units = "degrees_east"
    temp = ds.createVariable("temp", "f4", ("time", "station"), zlib=True, complevel=6)
    temp.units = "degC"
    temp.scale_factor = np.float32(0.01)
    pres = ds.createVariable("pres", "i2", ("time",))
    pres.missing_value = np.int16(-1)
    rh = ds.createVariable("rh", "i1", ("time",))
    t[:] = np.arange(n, dtype=np.float64) + 18000
    lat[:] = rng.random(s) * 90
    lon[:] = rng.random(s) * 180
    temp.set_auto_maskandscale(False)
    temp[:] = rng.integers(-3000, 4000, (n, s)).astype(np.float32)
    pres[:] = rng.integers(900, 1100, n).astype(np.int16)
    rh[:] = rng.integers(0, 100, n).astype(np.int8)
    ds.close()
    return {"name": "netcdf-classic", "file": path, "records": ["/time", "/temp", "/pres", "/rh"],
            "nc_records": ["/time", "/temp", "/pres", "/rh"]}


def _recdim(d):
    path = os.path.join(d, "netcdf-recdim.nc")
    rng = np.random.default_rng(13)
    n = 23
    ds = netCDF4.Dataset(path, "w", format="NETCDF4")
    ds.title = "a record dimension without a variable"
    ds.createDimension("rec", None)
    ds.createDimension("n", 3)
    ce = ds.createVariable("ce", "i4", ("rec",))
    ce.long_name = "count"
    dd = ds.createVariable("dd", "f8", ("rec", "n"), zlib=True)
    dd.units = "1"
    ce[:] = rng.integers(-1000, 1000, n).astype(np.int32)
    dd[:] = rng.random((n, 3))
    ds.close()
    return {"name": "netcdf-recdim", "file": path, "records": ["/ce", "/dd"], "nc_records": ["/ce", "/dd"]}


def _fixdim(d):
    path = os.path.join(d, "netcdf-fixdim.nc")
    rng = np.random.default_rng(14)
    n = 7
    ds = netCDF4.Dataset(path, "w", format="NETCDF4")
    ds.createDimension("sample", n)
    ds.createDimension("f", 2)
    x = ds.createVariable("X", "f4", ("sample", "f"))
    y = ds.createVariable("y", "i8", ("sample",))
    y.long_name = "label"
    x[:] = rng.random((n, 2)).astype(np.float32)
    y[:] = np.arange(n) * 10
    ds.close()
    return {"name": "netcdf-fixdim", "file": path, "records": ["/X", "/y"], "nc_records": ["/X", "/y"]}


def generate(d):
    """Write the netCDF corpus into directory d; return its cases."""
    return [dict(c, writer="netcdf", kind="netcdf") for c in (_met(d), _classic(d), _recdim(d), _fixdim(d))]
