// The pod sandbox's process (the "pause" container), built here because no registry can be
// reached: it holds the pod's namespaces, reaps zombies (it is PID 1 when the pod shares its PID
// namespace) and exits on SIGINT or SIGTERM.
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void onTerm(int sig) {
  (void)sig;
  _exit(0);
}

static void onChild(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction term = {.sa_handler = onTerm};
  struct sigaction child = {.sa_handler = onChild, .sa_flags = SA_NOCLDSTOP};
  (void)sigaction(SIGINT, &term, NULL);
  (void)sigaction(SIGTERM, &term, NULL);
  (void)sigaction(SIGCHLD, &child, NULL);
  for (;;) {
    pause();
  }
}
