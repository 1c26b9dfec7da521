# SPDX-License-Identifier: BSD-3-Clause
"""A training loop over an h5shuf-shuffled file: ranks, DataLoader workers, checkpoints, exact resume.

    python3 train_loop.py shuffled.h5 ckpt.json                         # one process
    torchrun --nproc_per_node 4 train_loop.py shuffled.h5 ckpt.json     # four ranks (RANK, WORLD_SIZE)

Each rank reads its own rows of the shuffled order (drop_last: the same number of batches on every rank);
a checkpoint holds the reader's state beside the model's, and a restarted run goes on from the batch
after the last checkpoint, with the very batches the interrupted run would have seen.  --stop-after N
stops after N steps, as a crash would.  Without torch the reader is iterated directly.
"""
import json
import os
import sys

import h5shuf

try:
    from torch.utils.data import DataLoader
except ImportError:
    DataLoader = None


def train(shuffled, checkpoint, epochs=2, batch_size=32, workers=2, stop_after=None):
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    reader = h5shuf.ShuffledReader(shuffled, ["/X", "/y"], batch_size, rank=rank, world_size=world,
                                   drop_last=True)
    ckpt = "%s.rank%d" % (checkpoint, rank)
    if os.path.exists(ckpt):
        with open(ckpt) as f:
            reader.load_state_dict(json.load(f)["data"])  # and the model's and optimizer's states
    loader = reader if DataLoader is None else DataLoader(reader, batch_size=None, num_workers=workers)
    steps = 0
    for epoch in range(reader.epoch, epochs):
        reader.set_epoch(epoch)
        done = reader.state_dict()["batches_done"]  # > 0 in an epoch resumed from a checkpoint
        for batch in loader:
            x, y = batch["/X"], batch["/y"]  # train_step(model, x, y)
            print("epoch %d batch %d: %d rows, first label %d" % (epoch, done, len(x), int(y[0])), flush=True)
            done += 1
            steps += 1
            if done % 10 == 0:
                with open(ckpt, "w") as f:
                    json.dump({"data": reader.state_dict(batches_done=done)}, f)
            if steps == stop_after:
                return


if __name__ == "__main__":
    args = sys.argv[1:]
    stop = int(args.pop(args.index("--stop-after") + 1)) if "--stop-after" in args else None
    args = [a for a in args if a != "--stop-after"]
    train(args[0], args[1], stop_after=stop)
