/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.c - a small pool of worker threads for chunk compression and decompression.
 *
 * One thread, the job's, submits tasks and is the only one that calls HDF5 (the library is thread-safe
 * only behind one global lock, so HDF5 calls from several threads would just queue); workers run the
 * tasks' pure computations.  While the submitter waits for a task it runs queued tasks itself, so a pool
 * of n threads keeps n cores busy: n - 1 workers plus the submitter.  Tasks run in FIFO order of
 * submission, which keeps memory bounded when the submitter reuses a ring of task slots.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "fault.h"
#include "pool.h"

struct h5shuf_pool {
    unsigned nthreads; /* the submitter included */
    unsigned started;  /* worker threads running */
    pthread_t *tids;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a task was queued, or stop */
    pthread_cond_t done; /* a task finished */
    struct h5shuf_task *head, *tail;
    unsigned long outstanding; /* submitted and not yet done */
    int stop;
};

struct worker_arg {
    struct h5shuf_pool *pool;
    unsigned id;
};

static void run_task(struct h5shuf_pool *p, struct h5shuf_task *t, unsigned id)
{
    t->run(t, id);
    pthread_mutex_lock(&p->mu);
    t->state = H5SHUF_TASK_DONE;
    p->outstanding--;
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

/* The first queued task, or NULL; called with the lock held. */
static struct h5shuf_task *pop(struct h5shuf_pool *p)
{
    struct h5shuf_task *t = p->head;
    if (t) {
        p->head = t->next;
        if (!p->head)
            p->tail = NULL;
        t->state = H5SHUF_TASK_RUNNING;
    }
    return t;
}

static void *worker_main(void *arg)
{
    struct h5shuf_pool *p = ((struct worker_arg *)arg)->pool;
    unsigned id = ((struct worker_arg *)arg)->id;
    free(arg);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct h5shuf_task *t = pop(p);
        if (t) {
            pthread_mutex_unlock(&p->mu);
            run_task(p, t, id);
            pthread_mutex_lock(&p->mu);
        } else if (p->stop) {
            break;
        } else {
            pthread_cond_wait(&p->work, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int h5shuf__pool_create(unsigned nthreads, struct h5shuf_pool **out)
{
    *out = NULL;
    struct h5shuf_pool *p = calloc(1, sizeof *p);
    if (!p)
        return H5SHUF_ENOMEM;
    p->nthreads = nthreads ? nthreads : 1;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return H5SHUF_ENOMEM;
    }
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (p->nthreads > 1) {
        p->tids = calloc(p->nthreads - 1, sizeof *p->tids);
        if (!p->tids) {
            h5shuf__pool_free(p);
            return H5SHUF_ENOMEM;
        }
        for (unsigned i = 1; i < p->nthreads; i++) {
            struct worker_arg *a = malloc(sizeof *a);
            if (!a) {
                h5shuf__pool_free(p);
                return H5SHUF_ENOMEM;
            }
            a->pool = p;
            a->id = i;
            if (pthread_create(&p->tids[p->started], NULL, worker_main, a) != 0) {
                free(a);
                break; /* fewer workers than asked: still correct, the submitter runs what is left */
            }
            p->started++;
        }
    }
    *out = p;
    return H5SHUF_OK;
}

void h5shuf__pool_free(struct h5shuf_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->tids[i], NULL);
    free(p->tids);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

unsigned h5shuf__pool_threads_for(unsigned asked)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return asked ? asked : cpus > 0 ? (unsigned)cpus : 1;
}

unsigned h5shuf__pool_threads(const struct h5shuf_pool *p)
{
    return p ? p->started + 1 : 1;
}

void h5shuf__pool_submit(struct h5shuf_pool *p, struct h5shuf_task *t)
{
    t->next = NULL;
    t->submitted = 1;
    if (!p || p->started == 0) { /* no workers: run it now */
        t->state = H5SHUF_TASK_RUNNING;
        t->run(t, 0);
        t->state = H5SHUF_TASK_DONE;
        return;
    }
    pthread_mutex_lock(&p->mu);
    t->state = H5SHUF_TASK_QUEUED;
    p->outstanding++;
    if (p->tail)
        p->tail->next = t;
    else
        p->head = t;
    p->tail = t;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

/* Until task t has run (t NULL: every submitted task), run queued tasks or sleep: the submitter is the
 * pool's last thread, and helps instead of idling. */
static void help_until_done(struct h5shuf_pool *p, const struct h5shuf_task *t)
{
    if (!p || p->started == 0)
        return;
    pthread_mutex_lock(&p->mu);
    while (t ? t->state == H5SHUF_TASK_QUEUED || t->state == H5SHUF_TASK_RUNNING : p->outstanding > 0) {
        struct h5shuf_task *q = pop(p);
        if (q) {
            pthread_mutex_unlock(&p->mu);
            run_task(p, q, 0);
            pthread_mutex_lock(&p->mu);
        } else {
            pthread_cond_wait(&p->done, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
}

void h5shuf__pool_wait(struct h5shuf_pool *p, struct h5shuf_task *t)
{
    help_until_done(p, t);
}
