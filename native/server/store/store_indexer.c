/*
 * store_indexer.c - the indexer thread: reads every stored capture with the C reader, right
 * behind its upload, and hands the facts (store_facts.c) to the service thread, which writes
 * them into the index.
 *
 * Why a thread: decoding a capture is the reader's full work (LZ4, every scope), tens of MB/s
 * for flame captures, while receiving and framing-checking it runs at network speed. On the
 * service thread, one large upload would delay every viewer and every other upload; here it
 * only delays its own index row. The service thread never waits for the indexer: jobs and
 * results are two lists under one mutex, held for a pointer swap.
 *
 * Jobs: a live job (an upload in progress) reads what has arrived, posts its facts so far at most
 * once a second (the captures page shows a live capture's frames growing), and waits for more;
 * after indexer_finish() it reads to the end and posts the final facts. Jobs are served round
 * robin, each turn bounded (TURN_FRAMES), so a 1 GB capture does not hold up a small one. At
 * most MAX_OPEN_FINISHED finished captures (a rebuild of thousands) are open at once, besides
 * the live ones. A capture whose checked records do not decode (damage the framing check cannot
 * see: valid checks over malformed contents) is refused: INDEX_REFUSED with the reader's words.
 * When nothing progressed, the thread sleeps POLL_MS (live files grow without telling it).
 */
#include "store.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TURN_FRAMES = 20000, MAX_OPEN_FINISHED = 4, POLL_MS = 50, PROGRESS_MS = 1000 };

typedef struct job {
    struct job *next;
    char id[STORE_ID_BYTES];
    char *path;
    bool live, finished, cancelled;
    vor_reader *r;
    facts_builder *facts;
    uint64_t frames_posted;
    int64_t posted_ms;
} job;

struct indexer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    job *jobs;                 /* guarded by lock (list links and the flags) */
    index_result *results, **results_tail;
    void (*wake)(void *user);
    void *wake_user;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void index_result_free(index_result *r)
{
    if (!r)
        return;
    store_facts_clear(&r->facts);
    free(r);
}

static void job_free(job *j)
{
    vor_reader_close(j->r);
    facts_builder_free(j->facts);
    free(j->path);
    free(j);
}

/* Queues res. Lock held: the job's "cancelled" is checked under the same hold, so a job
 * cancelled by indexer_add/indexer_cancel never posts afterwards. */
static void post_locked(indexer *ix, index_result *res)
{
    *ix->results_tail = res;
    ix->results_tail = &res->next;
}

/* Drops the queued results of id: they come from jobs now cancelled (a resumed upload's earlier
 * final facts would otherwise land after it restarted and mark it indexed with stale facts).
 * Lock held. */
static void drop_results(indexer *ix, const char *id)
{
    index_result **pp = &ix->results;
    ix->results_tail = &ix->results;
    while (*pp) {
        index_result *r = *pp;
        if (!strcmp(r->id, id)) {
            *pp = r->next;
            index_result_free(r);
        } else {
            pp = &r->next;
            ix->results_tail = pp;
        }
    }
}

/* The reader's words without its leading "<path>: ". */
static const char *reader_words(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (!strncmp(msg, path, n) && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}

typedef enum step_result { STEP_MORE, STEP_IDLE, STEP_DONE, STEP_BAD } step_result;

/* Reads up to TURN_FRAMES frames of j. STEP_BAD: problem filled. */
static step_result step(job *j, bool finished, char *problem, size_t problemlen)
{
    char err[512];
    if (!j->r) {
        j->r = vor_reader_open(j->path, err, sizeof err);
        if (!j->r) {
            snprintf(problem, problemlen, "%s", reader_words(err, j->path));
            return STEP_BAD;
        }
    }
    if (!j->facts && !(j->facts = facts_builder_new())) {
        snprintf(problem, problemlen, "out of memory");
        return STEP_BAD;
    }
    for (int i = 0; i < TURN_FRAMES; i++) {
        vor_reader_frame f;
        vor_read_status st = vor_reader_next(j->r, &f);
        if (vor_reader_damage_count(j->r) > 0) {
            vor_reader_damage d;
            if (vor_reader_get_damage(j->r, 0, &d))
                snprintf(problem, problemlen, "damaged record at byte %llu (%s)", (unsigned long long)d.offset,
                         d.problem);
            else
                snprintf(problem, problemlen, "damaged record");
            return STEP_BAD;
        }
        if (st == VOR_READ_ERROR) {
            snprintf(problem, problemlen, "%s", reader_words(vor_reader_error(j->r), j->path));
            return STEP_BAD;
        }
        if (st == VOR_READ_NOTHING_YET) {
            if (vor_reader_finished(j->r) == 1 || finished) {
                if (vor_reader_poll_header(j->r) != 1) {
                    snprintf(problem, problemlen, "incomplete header");
                    return STEP_BAD;
                }
                return STEP_DONE;
            }
            return i ? STEP_MORE : STEP_IDLE;
        }
        if (facts_builder_add(j->facts, j->r, &f)) {
            snprintf(problem, problemlen, "out of memory");
            return STEP_BAD;
        }
    }
    return STEP_MORE;
}

int store_index_file(const char *path, capture_facts *facts, char *problem, size_t problemlen)
{
    job j;
    memset(&j, 0, sizeof j);
    j.path = (char *)path;
    step_result s;
    while ((s = step(&j, true, problem, problemlen)) == STEP_MORE)
        ;
    int rc = -1;
    if (s == STEP_DONE)
        rc = facts_builder_result(j.facts, j.r, facts) == 0 ? 0 : (snprintf(problem, problemlen, "out of memory"), -1);
    vor_reader_close(j.r);
    facts_builder_free(j.facts);
    return rc;
}

static index_result *result_for(job *j, index_result_kind kind, const char *problem)
{
    index_result *res = calloc(1, sizeof *res);
    if (!res)
        return NULL;
    snprintf(res->id, sizeof res->id, "%s", j->id);
    res->kind = kind;
    if (problem)
        snprintf(res->problem, sizeof res->problem, "%s", problem);
    if (kind != INDEX_REFUSED && j->facts && facts_builder_result(j->facts, j->r, &res->facts) != 0) {
        store_facts_clear(&res->facts);
        res->kind = INDEX_REFUSED;
        snprintf(res->problem, sizeof res->problem, "out of memory while indexing");
    }
    return res;
}

/* Unlinks and frees `done`, or (done NULL) every cancelled job. Lock held. */
static void sweep(indexer *ix, job *done)
{
    for (job **pp = &ix->jobs; *pp;) {
        job *j = *pp;
        if (done ? j == done : j->cancelled) {
            *pp = j->next;
            job_free(j);
        } else {
            pp = &j->next;
        }
    }
}

static void *run(void *arg)
{
    indexer *ix = arg;
    /* Below the service thread: on a busy machine uploads and viewers go first, the index
     * follows when there is time (Linux: a thread's own nice value). */
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0) {
        /* not permitted: it runs at normal priority */
    }
    char problem[256];
    pthread_mutex_lock(&ix->lock);
    while (!ix->stop) {
        bool progressed = false;
        int open_finished = 0;
        sweep(ix, NULL);
        for (job *j = ix->jobs; j && !ix->stop;) {
            if (j->cancelled || (!j->live && !j->r && open_finished >= MAX_OPEN_FINISHED)) {
                j = j->next;
                continue;
            }
            if (!j->live)
                open_finished++;
            bool finished = j->finished || !j->live;
            /* Read without the lock: the job's reader is the thread's own; the list may grow
             * (new jobs are pushed at the head) and flags change, but j stays allocated until
             * this thread sweeps it. */
            pthread_mutex_unlock(&ix->lock);
            step_result s = step(j, finished, problem, sizeof problem);
            index_result *res = NULL;
            if (s == STEP_DONE || s == STEP_BAD) {
                res = result_for(j, s == STEP_DONE ? INDEX_DONE : INDEX_REFUSED, s == STEP_BAD ? problem : NULL);
            } else if (j->live && j->facts && now_ms() - j->posted_ms >= PROGRESS_MS) {
                uint64_t frames = 0;
                capture_facts peek = {0};
                if (facts_builder_result(j->facts, j->r, &peek) == 0)
                    frames = peek.frames;
                store_facts_clear(&peek);
                if (frames != j->frames_posted) {
                    res = result_for(j, INDEX_PROGRESS, NULL);
                    j->frames_posted = frames;
                }
                j->posted_ms = now_ms();
            }
            pthread_mutex_lock(&ix->lock);
            if (res && !j->cancelled) {
                post_locked(ix, res);
                if (ix->wake)
                    ix->wake(ix->wake_user);
            } else {
                index_result_free(res);
            }
            job *next = j->next;
            if (s == STEP_DONE || s == STEP_BAD) {
                sweep(ix, j);
                progressed = true;
            } else if (s == STEP_MORE) {
                progressed = true;
            }
            j = next;
        }
        if (!progressed && !ix->stop) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += POLL_MS * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&ix->cond, &ix->lock, &until);
        }
    }
    pthread_mutex_unlock(&ix->lock);
    return NULL;
}

indexer *indexer_start(void (*wake)(void *user), void *user)
{
    indexer *ix = calloc(1, sizeof *ix);
    if (!ix)
        return NULL;
    ix->wake = wake;
    ix->wake_user = user;
    ix->results_tail = &ix->results;
    pthread_mutex_init(&ix->lock, NULL);
    pthread_cond_init(&ix->cond, NULL);
    if (pthread_create(&ix->thread, NULL, run, ix) != 0) {
        pthread_mutex_destroy(&ix->lock);
        pthread_cond_destroy(&ix->cond);
        free(ix);
        return NULL;
    }
    return ix;
}

void indexer_stop(indexer *ix)
{
    if (!ix)
        return;
    pthread_mutex_lock(&ix->lock);
    ix->stop = true;
    pthread_cond_signal(&ix->cond);
    pthread_mutex_unlock(&ix->lock);
    pthread_join(ix->thread, NULL);
    for (job *j = ix->jobs; j;) {
        job *n = j->next;
        job_free(j);
        j = n;
    }
    for (index_result *r = ix->results; r;) {
        index_result *n = r->next;
        index_result_free(r);
        r = n;
    }
    pthread_mutex_destroy(&ix->lock);
    pthread_cond_destroy(&ix->cond);
    free(ix);
}

int indexer_add(indexer *ix, const char *id, const char *path, bool live)
{
    if (!ix)
        return 0; /* stopped: the server is going away */
    job *j = calloc(1, sizeof *j);
    if (!j || !(j->path = strdup(path))) {
        free(j);
        return -1;
    }
    snprintf(j->id, sizeof j->id, "%s", id);
    j->live = live;
    pthread_mutex_lock(&ix->lock);
    for (job *o = ix->jobs; o; o = o->next)
        if (!strcmp(o->id, id))
            o->cancelled = true;
    drop_results(ix, id);
    if (live) { /* live jobs first: they are read at every turn */
        j->next = ix->jobs;
        ix->jobs = j;
    } else {
        job **pp = &ix->jobs;
        while (*pp)
            pp = &(*pp)->next;
        *pp = j;
    }
    pthread_cond_signal(&ix->cond);
    pthread_mutex_unlock(&ix->lock);
    return 0;
}

static void mark(indexer *ix, const char *id, bool cancel)
{
    if (!ix)
        return;
    pthread_mutex_lock(&ix->lock);
    for (job *j = ix->jobs; j; j = j->next)
        if (!strcmp(j->id, id) && !j->cancelled) {
            if (cancel)
                j->cancelled = true;
            else
                j->finished = true;
        }
    if (cancel)
        drop_results(ix, id);
    pthread_cond_signal(&ix->cond);
    pthread_mutex_unlock(&ix->lock);
}

void indexer_finish(indexer *ix, const char *id)
{
    mark(ix, id, false);
}

void indexer_cancel(indexer *ix, const char *id)
{
    mark(ix, id, true);
}

index_result *indexer_take(indexer *ix)
{
    if (!ix)
        return NULL;
    pthread_mutex_lock(&ix->lock);
    index_result *r = ix->results;
    if (r) {
        ix->results = r->next;
        if (!ix->results)
            ix->results_tail = &ix->results;
        r->next = NULL;
    }
    pthread_mutex_unlock(&ix->lock);
    return r;
}

int indexer_pending(indexer *ix)
{
    int n = 0;
    if (!ix)
        return 0;
    pthread_mutex_lock(&ix->lock);
    for (job *j = ix->jobs; j; j = j->next)
        n += !j->cancelled;
    pthread_mutex_unlock(&ix->lock);
    return n;
}
