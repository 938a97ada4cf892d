// start-watch: how long a JACK client takes from exec to ports another client can connect to,
// and to the first period it processed (the first non-silent sample back from its output while
// noise goes into its input). For bench/start-bench.sh; built by it with cc.
//
//   start-watch IN-PORT OUT-PORT -- COMMAND [ARG]...
//
// Prints "ports_ms first_ms server_ms" (milliseconds after the fork that execs COMMAND, or
// after START_WATCH_T0, a `date +%s%N` taken before, when set; server_ms: when this watcher's
// own client got in, so a server started at START_WATCH_T0 took that long), then stops COMMAND
// with SIGTERM and waits for it. Exit 1 when any did not happen within 10 s.
#include <jack/jack.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static jack_port_t *out, *in;
static _Atomic long long heard_ns;  // ns since the epoch of the first non-silent sample back (0: none)
static unsigned noise = 1;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);  // comparable with `date +%s%N` (START_WATCH_T0)
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    float *o = jack_port_get_buffer(out, frames), *i = jack_port_get_buffer(in, frames);
    for (jack_nframes_t n = 0; n < frames; n++) {
        noise = noise * 1664525u + 1013904223u;
        o[n] = ((float)(noise >> 8) / 16777216.0f - 0.5f) * 0.02f;  // -40 dBFS-ish white noise
    }
    if (atomic_load(&heard_ns) == 0)
        for (jack_nframes_t n = 0; n < frames; n++)
            if (i[n] > 1e-6f || i[n] < -1e-6f) { atomic_store(&heard_ns, now_ns()); break; }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: start-watch IN-PORT OUT-PORT -- COMMAND [ARG]...\n");
        return 64;
    }
    // A server still starting (START_WATCH_T0 set at its exec) is waited for, 1 ms at a time.
    long long give_up = now_ns() + 10000000000LL;
    jack_client_t *client = NULL;
    while (!(client = jack_client_open("start-watch", JackNoStartServer, NULL)) && now_ns() < give_up) usleep(1000);
    if (!client) { fprintf(stderr, "start-watch: no JACK server\n"); return 69; }
    long long server = now_ns();
    out = jack_port_register(client, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    in = jack_port_register(client, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    jack_set_process_callback(client, process, NULL);
    if (jack_activate(client)) { fprintf(stderr, "start-watch: cannot activate\n"); return 69; }
    char own_out[256], own_in[256];
    snprintf(own_out, sizeof own_out, "%s:out", jack_get_client_name(client));
    snprintf(own_in, sizeof own_in, "%s:in", jack_get_client_name(client));

    long long start = now_ns();
    if (getenv("START_WATCH_T0")) start = atoll(getenv("START_WATCH_T0"));
    pid_t child = fork();
    if (child == 0) {
        execvp(argv[4], argv + 4);
        _exit(127);
    }
    long long ports = 0, deadline = now_ns() + 10000000000LL;
    // Connectable: JACK accepts a connection to its input only once the client is active.
    while (!ports && now_ns() < deadline) {
        if (jack_connect(client, own_out, argv[1]) == 0) ports = now_ns();
        else usleep(500);
    }
    int wired = ports && jack_connect(client, argv[2], own_in) == 0;
    while (wired && atomic_load(&heard_ns) == 0 && now_ns() < deadline) usleep(500);
    long long heard = atomic_load(&heard_ns);
    jack_client_close(client);
    kill(child, SIGTERM);
    waitpid(child, NULL, 0);
    if (!ports || !heard) { fprintf(stderr, "start-watch: %s\n", ports ? "no sound came back" : "the ports did not appear"); return 1; }
    printf("%.1f %.1f %.1f\n", (ports - start) / 1e6, (heard - start) / 1e6, (server - start) / 1e6);
    return 0;
}
