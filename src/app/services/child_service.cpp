// Mounted child services: a supervisor per service (one thread running an io_context) that
// spawns, watches and stops the child's processes, and the routes that forward a prefix to
// the current process. The supervisor alone changes the state; server threads read it
// under a mutex and hold a process (a shared_ptr, counted in flight) for the length of a
// request, which is what lets a reload or an idle stop wait for requests to finish.
//
// A process is spawned with fork and execve rather than posix_spawn, which has no way to set
// PR_SET_PDEATHSIG in the child. Between the two, the child makes every descriptor it got
// from the server (listeners, client connections) close-on-exec with close_range. Its exit
// is watched through a pidfd, so the supervisor needs no SIGCHLD handler that would race the
// application's own.
#include "waypoint/app/services/child_service.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/app/context.hpp"
#include "waypoint/app/http_error.hpp"
#include "waypoint/app/realtime/websocket.hpp"

#include "app/documents/mounted_api.hpp"
#include "waypoint/detail/unix_address.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;

namespace waypoint::app {
namespace {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;
using asio::use_awaitable;
constexpr auto as_tuple_awaitable = asio::as_tuple(use_awaitable);

// What the forwarded request's Via names (RFC 9110 §7.6.3).
constexpr std::string_view via_token = "1.1 waypoint";

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + ::strsignal(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// The highest descriptor number a child could have inherited, read before fork (sysconf is
// not async-signal-safe): the fallback for a kernel without close_range.
long descriptor_ceiling() {
  long n = ::sysconf(_SC_OPEN_MAX);
  return n > 0 ? n : 65536;
}

struct spawned {
  pid_t pid;
  int pidfd;
};

// fork, then in the child only async-signal-safe calls until execve. An exec that fails
// writes its errno to a close-on-exec pipe, so the parent tells "could not run" (thrown,
// naming the executable) from "ran and exited".
spawned spawn(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "child_service: pipe2");
  long ceiling = descriptor_ceiling();
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    throw std::system_error(e, std::generic_category(), "child_service: fork");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);  // servers ignore it; exec keeps an ignored signal ignored
    if (::syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) != 0)
      for (long fd = 3; fd < ceiling; ++fd)
        if (fd != report[1]) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    ::execve(argv[0], argv.data(), environ);
    int e = errno;
    (void)!::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(report[1]);
  int exec_errno = 0;
  ssize_t n;
  do n = ::read(report[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n > 0) {
    int status;
    ::waitpid(pid, &status, 0);
    throw std::runtime_error("could not run " + command.front() + ": " + errno_text(exec_errno));
  }
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int e = errno;
    ::kill(pid, SIGKILL);
    int status;
    ::waitpid(pid, &status, 0);
    throw std::system_error(e, std::generic_category(), "child_service: pidfd_open");
  }
  return {pid, pidfd};
}

}  // namespace

namespace detail {

// Whether the process listening on a child's socket may be sent requests: the child itself,
// or a process of this user (a child that forks its server). Anyone else got there first, or
// in between, and must see nothing, not even the readiness probe.
bool is_childs_listener(const waypoint::beast::peer_credentials& peer, pid_t child) noexcept {
  return peer.pid == child || peer.uid == ::geteuid();
}

// One process of the child and the client that reaches it.
struct child_process {
  child_process(std::uint64_t g, std::string path, pid_t p, const upstream_options& forwarding)
      : generation(g), socket_path(std::move(path)), up(for_child(forwarding, socket_path, p)), pid(p) {}
  ~child_process() {
    if (exit_fd >= 0) ::close(exit_fd);
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  // `o` aimed at the socket of child `pid`, trusting no other listener there.
  static upstream_options for_child(upstream_options o, const std::string& socket, pid_t pid) {
    o.url = "http://unix:" + socket;
    o.trust_unix_peer = [pid](const waypoint::beast::peer_credentials& peer) { return is_childs_listener(peer, pid); };
    return o;
  }
  // Whether connected socket `fd` (a WebSocket's, which the upstream does not make) reaches
  // this process's listener.
  bool listener_trusted(int fd) const noexcept {
    ucred peer{};
    return waypoint::detail::read_peer_credentials(fd, peer) &&
           is_childs_listener({peer.pid, peer.uid, peer.gid}, pid);
  }

  std::uint64_t generation;
  std::string socket_path;
  upstream up;
  pid_t pid;
  // A pidfd of its own (watch() owns the other): readable once the process has exited, so
  // that a request it failed can tell a crash from any thread (has_exited_within).
  int exit_fd = -1;
  std::atomic<int> in_flight{0};
  std::atomic<clock::rep> last_used{clock::now().time_since_epoch().count()};
  // Supervisor thread only:
  bool exited = false;
  std::string exit_text;  // "exited with status 3", once exited
  bool stopping = false;  // asked to stop: its exit is no crash
  clock::time_point started{};
};

struct child_supervisor : std::enable_shared_from_this<child_supervisor> {
  child_supervisor(std::string n, child_service_options o) : name(std::move(n)), options(std::move(o)) {}

  std::string name;
  child_service_options options;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::thread thread;

  mutable std::mutex mutex;  // guards the five below, read by the server's threads
  std::shared_ptr<child_process> current;
  child_status status;
  clock::time_point retry_at{};
  // What the current process serves besides its routes, read at each start (read_surface).
  std::shared_ptr<const nlohmann::ordered_json> document, tools;
  std::atomic<std::uint64_t> surface_version{0};

  // Supervisor thread only:
  std::vector<std::shared_ptr<child_process>> live;  // spawned and not yet reaped
  bool starting = false;
  bool stopped_by_request = false;  // stop(): no restart, no lazy start
  std::string private_directory;     // of the sockets; empty until a start makes it
  unsigned crashes_in_a_row = 0;
  std::shared_ptr<asio::steady_timer> changed;  // cancelled at each state change: waiters wake
  std::shared_ptr<asio::steady_timer> restart_timer;

  void log(const std::string& line) const {
    std::string text = "child " + name + ": " + line;
    if (options.logger) options.logger(text);
    else std::cerr << text + "\n" << std::flush;
  }

  void set_state(child_state s, std::shared_ptr<child_process> serving, std::string error = {}) {
    std::lock_guard lock(mutex);
    status.state = s;
    current = std::move(serving);
    status.pid = current ? current->pid : 0;
    if (!error.empty()) status.last_error = std::move(error);
  }

  void notify() {
    if (changed) changed->cancel();
    changed = std::make_shared<asio::steady_timer>(io, clock::time_point::max());
  }

  asio::awaitable<void> wait_for_change() {
    std::shared_ptr<asio::steady_timer> t = changed;
    co_await t->async_wait(as_tuple_awaitable);
  }

  // The sockets live in a directory of the service's own, made by mkdtemp (mode 0700) under
  // socket_directory, $XDG_RUNTIME_DIR or /tmp, and removed by stop(): no other user can
  // create, replace or connect to a file in it. A name of /tmp's own (pid and generation:
  // predictable) was another user's to take first, and with it the probe, the documents
  // and clients' requests with their Authorization and Cookie (issue #44).
  std::string directory_template() const { return base_directory() + "/waypoint-" + name + "-XXXXXX"; }
  std::string base_directory() const {
    if (!options.socket_directory.empty()) return options.socket_directory;
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    return runtime && *runtime ? runtime : "/tmp";
  }
  static std::string socket_in(const std::string& directory, std::uint64_t generation) {
    return directory + "/" + std::to_string(generation) + ".sock";
  }

  // The private directory, made when there is none, and checked each time: a directory,
  // ours, that neither group nor others may enter. Throws naming what is wrong.
  const std::string& private_socket_directory() {
    if (private_directory.empty()) {
      std::string path = directory_template();
      if (!::mkdtemp(path.data()))
        throw std::system_error(errno, std::generic_category(), "mkdtemp " + path);
      private_directory = std::move(path);
    }
    struct stat dir {};
    if (::lstat(private_directory.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode) ||
        dir.st_uid != ::geteuid() || (dir.st_mode & 077) != 0)
      throw std::runtime_error("the socket directory " + private_directory +
                               " is no longer a directory of this user's with mode 0700");
    return private_directory;
  }

  void remove_private_directory() {
    if (private_directory.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(private_directory, ec);
    if (ec) log("could not remove " + private_directory + ": " + ec.message());
    private_directory.clear();
  }

  std::vector<std::string> command_for(const std::string& socket) const {
    std::vector<std::string> argv = options.command;
    for (std::string& a : argv)
      for (std::size_t at = a.find("{socket}"); at != std::string::npos; at = a.find("{socket}", at + socket.size()))
        a.replace(at, 8, socket);
    return argv;
  }

  // Spawns a process, watches it, and waits for its readiness path. Throws, the process
  // killed, when it exits or is not ready within start_timeout.
  asio::awaitable<std::shared_ptr<child_process>> launch() {
    std::uint64_t generation;
    {
      std::lock_guard lock(mutex);
      generation = ++status.generation;
    }
    std::string socket = socket_in(private_socket_directory(), generation);
    ::unlink(socket.c_str());  // in our own directory: a crashed predecessor's
    spawned s = spawn(command_for(socket));
    auto process = std::make_shared<child_process>(generation, std::move(socket), s.pid, options.forwarding);
    process->exit_fd = ::fcntl(s.pidfd, F_DUPFD_CLOEXEC, 3);  // -1: crashes are then 502s
    process->started = clock::now();
    live.push_back(process);
    asio::co_spawn(io, watch(process, s.pidfd), asio::detached);
    log("started pid " + std::to_string(s.pid) + " on " + process->socket_path);

    upstream_options probe_options = child_process::for_child(options.forwarding, process->socket_path, process->pid);
    probe_options.connect_timeout = probe_options.response_timeout = std::chrono::seconds(1);
    probe_options.max_idle_connections = 0;
    upstream probe(probe_options);
    auto deadline = clock::now() + options.start_timeout;
    std::string last = "its socket never accepted a connection";
    asio::steady_timer pause(io);
    while (!process->exited && clock::now() < deadline) {
      http::request<http::string_body> req(http::verb::get, options.ready_path, 11);
      try {
        auto res = co_await probe.send(req);
        if (res.result_int() >= 200 && res.result_int() < 300) co_return process;
        last = options.ready_path + " answered " + std::to_string(res.result_int());
      } catch (const http_error& e) {
        last = std::string(e.detail());
      }
      pause.expires_after(std::chrono::milliseconds(20));
      co_await pause.async_wait(as_tuple_awaitable);
    }
    std::string why = process->exited ? process->exit_text + " before it was ready"
                                       : "was not ready within " + std::to_string(options.start_timeout.count()) +
                                             " ms (" + last + ")";
    co_await terminate(process);
    throw std::runtime_error("pid " + std::to_string(process->pid) + " " + why);
  }

  // The process's OpenAPI document and MCP tools, for the host's (mounted_api). Either may
  // be missing (a child that serves neither); one that is not what it should be is logged
  // and left out, never a failed start.
  asio::awaitable<void> read_surface(const child_process& process) {
    std::shared_ptr<const nlohmann::ordered_json> doc, list;
    if (!options.openapi_path.empty()) {
      try {
        auto res = co_await process.up.send(http::request<http::string_body>(http::verb::get, options.openapi_path, 11));
        auto parsed = nlohmann::ordered_json::parse(res.body(), nullptr, false);
        if (res.result_int() == 200 && parsed.is_object() && parsed.contains("paths"))
          doc = std::make_shared<const nlohmann::ordered_json>(std::move(parsed));
        else if (res.result_int() != 404)
          log(options.openapi_path + " answered " + std::to_string(res.result_int()) + " without an OpenAPI document");
      } catch (const std::exception& e) {
        log(options.openapi_path + ": " + e.what());
      }
    }
    if (!options.mcp_path.empty()) {
      http::request<http::string_body> req(http::verb::post, options.mcp_path, 11);
      req.set(http::field::content_type, "application/json");
      req.set(http::field::accept, "application/json, text/event-stream");
      req.body() = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
      try {
        auto res = co_await process.up.send(std::move(req));
        auto parsed = nlohmann::ordered_json::parse(res.body(), nullptr, false);
        if (res.result_int() == 200 && parsed.is_object() && parsed["result"]["tools"].is_array())
          list = std::make_shared<const nlohmann::ordered_json>(std::move(parsed["result"]["tools"]));
        else if (res.result_int() != 404)
          log(options.mcp_path + " answered " + std::to_string(res.result_int()) + " without a tools/list result");
      } catch (const std::exception& e) {
        log(options.mcp_path + ": " + e.what());
      }
    }
    std::lock_guard lock(mutex);
    document = std::move(doc);
    tools = std::move(list);
    ++surface_version;
  }

  // launch(), with a failure given as its text: each caller says what a failure means.
  asio::awaitable<std::pair<std::shared_ptr<child_process>, std::string>> try_launch() {
    try {
      co_return std::pair{co_await launch(), std::string()};
    } catch (const std::exception& e) {
      co_return std::pair{std::shared_ptr<child_process>(), std::string(e.what())};
    }
  }

  // Reaps the process when it exits; an exit nobody asked for is a crash, restarted.
  asio::awaitable<void> watch(std::shared_ptr<child_process> process, int pidfd) {
    asio::posix::stream_descriptor exit_signal(io, pidfd);
    co_await exit_signal.async_wait(asio::posix::stream_descriptor::wait_read, as_tuple_awaitable);
    int status = 0;
    while (::waitpid(process->pid, &status, 0) < 0 && errno == EINTR) {
    }
    process->exited = true;
    process->exit_text = describe_exit(status);
    ::unlink(process->socket_path.c_str());
    std::erase(live, process);
    std::string how = "pid " + std::to_string(process->pid) + " " + process->exit_text;
    bool serving;
    {
      std::lock_guard lock(mutex);
      serving = current == process;
    }
    if (process->stopping || !serving) {
      if (!process->stopping) log(how + " while starting");
      notify();
      co_return;
    }
    log(how);
    on_crash(how, clock::now() - process->started);
  }

  void on_crash(const std::string& why, clock::duration uptime) {
    {
      std::lock_guard lock(mutex);
      ++status.crashes;
    }
    if (uptime > options.max_restart_delay) crashes_in_a_row = 0;
    auto delay = options.restart_delay * (1ll << std::min(crashes_in_a_row, 20u));
    delay = std::min<std::chrono::milliseconds>(delay, options.max_restart_delay);
    ++crashes_in_a_row;
    {
      std::lock_guard lock(mutex);
      retry_at = clock::now() + delay;
    }
    set_state(child_state::crashed, nullptr, why);
    notify();
    if (stopped_by_request) return;
    log("restarting in " + std::to_string(delay.count()) + " ms");
    restart_timer = std::make_shared<asio::steady_timer>(io, delay);
    asio::co_spawn(io, restart_after(restart_timer), asio::detached);
  }

  asio::awaitable<void> restart_after(std::shared_ptr<asio::steady_timer> timer) {
    auto [ec] = co_await timer->async_wait(as_tuple_awaitable);
    if (ec || stopped_by_request || starting) co_return;
    try {
      co_await bring_up();
    } catch (const std::exception&) {
      // bring_up logged it and scheduled the next try
    }
  }

  // Starts a process and makes it current, from any state but a start in progress.
  asio::awaitable<void> bring_up() {
    starting = true;
    set_state(child_state::starting, nullptr);
    notify();
    auto [process, failure] = co_await try_launch();
    starting = false;
    if (!process) {
      log("start failed: " + failure);
      on_crash("start failed: " + failure, {});
      throw std::runtime_error(name + ": " + failure);
    }
    if (stopped_by_request) {  // stop() came while it started
      co_await terminate(process);
      notify();
      throw std::runtime_error(name + ": stopped while starting");
    }
    co_await read_surface(*process);
    set_state(child_state::running, process);
    notify();
  }

  // Waits until the service has a current process, starting one when it has none; returns
  // at once when it is crashed (the caller answers 503) or stopped by request.
  asio::awaitable<void> ensure_running() {
    while (true) {
      child_state s;
      {
        std::lock_guard lock(mutex);
        s = status.state;
      }
      if (s == child_state::running || s == child_state::crashed || stopped_by_request) co_return;
      if (starting) {
        co_await wait_for_change();
        continue;
      }
      try {
        co_await bring_up();
      } catch (const std::exception&) {
      }
      co_return;
    }
  }

  // Waits for the requests in flight (up to stop_timeout), then SIGTERM, then SIGKILL.
  asio::awaitable<void> retire(std::shared_ptr<child_process> process) {
    process->stopping = true;
    asio::steady_timer pause(io);
    auto deadline = clock::now() + options.stop_timeout;
    while (process->in_flight.load() > 0 && clock::now() < deadline) {
      pause.expires_after(std::chrono::milliseconds(10));
      co_await pause.async_wait(as_tuple_awaitable);
    }
    co_await terminate(process);
  }

  asio::awaitable<void> terminate(std::shared_ptr<child_process> process) {
    process->stopping = true;
    asio::steady_timer pause(io);
    for (int sig : {SIGTERM, SIGKILL}) {
      if (process->exited) co_return;
      ::kill(process->pid, sig);
      auto deadline = clock::now() + options.stop_timeout;
      while (!process->exited && clock::now() < deadline) {
        pause.expires_after(std::chrono::milliseconds(10));
        co_await pause.async_wait(as_tuple_awaitable);
      }
      if (!process->exited && sig == SIGTERM)
        log("pid " + std::to_string(process->pid) + " ignored SIGTERM for " +
            std::to_string(options.stop_timeout.count()) + " ms: SIGKILL");
    }
    while (!process->exited) {  // reaped by watch(): SIGKILL is not refused
      pause.expires_after(std::chrono::milliseconds(10));
      co_await pause.async_wait(as_tuple_awaitable);
    }
  }

  asio::awaitable<void> reload() {
    stopped_by_request = false;
    if (starting) co_await wait_for_change();
    std::shared_ptr<child_process> old;
    {
      std::lock_guard lock(mutex);
      old = current;
    }
    if (!old) {
      co_await bring_up();
      co_return;
    }
    auto [process, failure] = co_await try_launch();
    if (!process) {
      log("reload failed, pid " + std::to_string(old->pid) + " keeps serving: " + failure);
      throw std::runtime_error(name + ": reload failed: " + failure);
    }
    co_await read_surface(*process);
    set_state(child_state::running, process);
    {
      std::lock_guard lock(mutex);
      ++status.reloads;
    }
    notify();
    log("reloaded: pid " + std::to_string(process->pid) + " serves, pid " + std::to_string(old->pid) + " drains");
    co_await retire(old);
  }

  asio::awaitable<void> stop() {
    stopped_by_request = true;
    if (restart_timer) restart_timer->cancel();
    std::shared_ptr<child_process> old;
    {
      std::lock_guard lock(mutex);
      old = current;
    }
    set_state(child_state::stopped, nullptr);
    notify();
    if (old) co_await retire(old);
    while (!live.empty()) co_await terminate(live.front());
    remove_private_directory();
  }

  asio::awaitable<void> stop_when_idle() {
    asio::steady_timer tick(io);
    auto period = std::max<std::chrono::milliseconds>(options.idle_stop / 4, std::chrono::milliseconds(20));
    while (true) {
      tick.expires_after(period);
      auto [ec] = co_await tick.async_wait(as_tuple_awaitable);
      if (ec) co_return;
      std::shared_ptr<child_process> idle;
      {
        std::lock_guard lock(mutex);
        if (current && current->in_flight.load() == 0 &&
            clock::now() - clock::time_point(clock::duration(current->last_used.load())) > options.idle_stop) {
          idle = current;
          current = nullptr;
          status.state = child_state::stopped;
          status.pid = 0;
        }
      }
      if (!idle) continue;
      notify();
      log("idle for " + std::to_string(options.idle_stop.count()) + " ms: stopping pid " + std::to_string(idle->pid));
      co_await retire(idle);
      // Nothing left behind while idle; the next start makes a new directory.
      if (live.empty() && !starting) remove_private_directory();
    }
  }

  // Runs `work` on the supervisor's thread; the future completes with it.
  std::future<void> run(std::function<asio::awaitable<void>()> work) {
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> f = done->get_future();
    asio::co_spawn(io, std::move(work), [done](std::exception_ptr e) {
      if (e) done->set_exception(e);
      else done->set_value();
    });
    return f;
  }
};

}  // namespace detail

namespace {

void check(const std::string& name, const child_service_options& o) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument("child_service " + name + ": " + what); };
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      }))
    fail("the name must be letters, digits, '-' and '_' (it names the socket file)");
  if (o.command.empty()) fail("the command is empty");
  const std::string& exe = o.command.front();
  if (exe.empty() || exe.front() != '/') fail("the executable must be an absolute path, not \"" + exe + "\"");
  struct stat file {};
  if (::stat(exe.c_str(), &file) != 0) fail(exe + " is not an executable file (" + errno_text(errno) + ")");
  if (!S_ISREG(file.st_mode) || (file.st_mode & 0111) == 0 || ::access(exe.c_str(), X_OK) != 0)
    fail(exe + " is not an executable file");
  if (o.ready_path.empty() || o.ready_path.front() != '/') fail("ready_path must start with '/'");
  for (auto [value, label] : {std::pair{o.start_timeout, "start_timeout"}, {o.stop_timeout, "stop_timeout"},
                              {o.restart_delay, "restart_delay"}, {o.max_restart_delay, "max_restart_delay"}})
    if (value <= std::chrono::milliseconds::zero()) fail(std::string(label) + " must be positive");
  if (o.idle_stop < std::chrono::milliseconds::zero()) fail("idle_stop must not be negative");
}

}  // namespace

child_service::child_service(std::string name, child_service_options options) {
  check(name, options);
  supervisor_ = std::make_shared<detail::child_supervisor>(std::move(name), std::move(options));
  // The longest path this service will use must fit sun_path: say so now, not at the first start.
  std::string longest = detail::child_supervisor::socket_in(supervisor_->directory_template(), ~std::uint64_t{0});
  if (longest.size() >= sizeof(sockaddr_un::sun_path))
    throw std::invalid_argument("child_service " + supervisor_->name + ": socket paths such as " + longest + " are " +
                                std::to_string(longest.size()) + " bytes, over the " +
                                std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                                " a unix socket allows: choose a shorter socket_directory");
  upstream probe(detail::child_process::for_child(supervisor_->options.forwarding, longest, 0));
  supervisor_->notify();
  detail::child_supervisor& s = *supervisor_;
  s.thread = std::thread([&s] { s.io.run(); });
  if (s.options.idle_stop > std::chrono::milliseconds::zero())
    asio::co_spawn(s.io, s.stop_when_idle(), asio::detached);
}

child_service::~child_service() {
  try {
    stop().get();
  } catch (const std::exception& e) {
    supervisor_->log(std::string("stop: ") + e.what());
  }
  supervisor_->io.stop();
  supervisor_->thread.join();
}

std::future<void> child_service::start() {
  auto s = supervisor_;
  return s->run([s]() -> asio::awaitable<void> {
    s->stopped_by_request = false;
    if (s->options.lazy) co_return;
    if (s->starting) {
      co_await s->wait_for_change();
    } else if (!s->status.pid) {
      co_await s->bring_up();
      co_return;
    }
    std::lock_guard lock(s->mutex);
    if (s->status.state != child_state::running) throw std::runtime_error(s->name + ": " + s->status.last_error);
  });
}

std::future<void> child_service::reload() {
  auto s = supervisor_;
  return s->run([s] { return s->reload(); });
}

std::future<void> child_service::stop() {
  auto s = supervisor_;
  return s->run([s] { return s->stop(); });
}

child_status child_service::status() const {
  std::lock_guard lock(supervisor_->mutex);
  return supervisor_->status;
}

const std::string& child_service::name() const noexcept { return supervisor_->name; }

namespace {

// A process held for one request: counted in flight, so a reload or an idle stop waits.
class lease {
 public:
  explicit lease(std::shared_ptr<detail::child_process> p) : process_(std::move(p)) { ++process_->in_flight; }
  lease(lease&& other) noexcept : process_(std::move(other.process_)) {}
  lease& operator=(lease&&) = delete;
  ~lease() {
    if (!process_) return;
    process_->last_used.store(clock::now().time_since_epoch().count());
    --process_->in_flight;
  }
  detail::child_process& operator*() const noexcept { return *process_; }
  detail::child_process* operator->() const noexcept { return process_.get(); }

 private:
  std::shared_ptr<detail::child_process> process_;
};

// 503 with Retry-After (when the supervisor means to try again, at least a second away):
// the service has no process to give the request.
[[noreturn]] void throw_unavailable(context& ctx, const detail::child_supervisor& s, std::string detail) {
  clock::time_point retry_at;
  {
    std::lock_guard lock(s.mutex);
    retry_at = s.retry_at;
  }
  auto wait = std::chrono::ceil<std::chrono::seconds>(retry_at - clock::now());
  ctx.response().header(http::field::retry_after, std::to_string(std::max<long long>(1, wait.count())));
  throw http_error(503, std::move(detail));
}

// The current process, started first when the service is lazy or idle-stopped; 503 with
// Retry-After when there is none to give.
asio::awaitable<lease> acquire(context& ctx, std::shared_ptr<detail::child_supervisor> s) {
  for (int attempt = 0;; ++attempt) {
    child_state state;
    std::string error;
    {
      std::lock_guard lock(s->mutex);
      if (s->current) co_return lease(s->current);
      state = s->status.state;
      error = s->status.last_error;
    }
    if (state == child_state::crashed || attempt > 0) {
      if (state != child_state::crashed) throw_unavailable(ctx, *s, "The service " + s->name + " is stopped.");
      throw_unavailable(ctx, *s, "The service " + s->name + " is restarting" + (error.empty() ? "" : " (" + error + ")") + ".");
    }
    co_await asio::co_spawn(s->io, s->ensure_running(), use_awaitable);
  }
}

// How long a request the process failed waits to learn whether it died. The kernel closes
// a dying process's sockets (connections refused, or reset) a moment before its pidfd
// becomes readable; a live process that refused stays a 502 after this.
constexpr std::chrono::milliseconds crash_notice_window{250};

// Whether the process has exited, or does within `within`.
asio::awaitable<bool> has_exited_within(const detail::child_process& p, std::chrono::milliseconds within) {
  if (p.exit_fd < 0) co_return false;
  asio::steady_timer pause(co_await asio::this_coro::executor);
  auto deadline = clock::now() + within;
  while (true) {
    pollfd exit_signal{p.exit_fd, POLLIN, 0};
    if (::poll(&exit_signal, 1, 0) > 0) co_return true;
    if (clock::now() >= deadline) co_return false;
    pause.expires_after(std::chrono::milliseconds(5));
    co_await pause.async_wait(as_tuple_awaitable);
  }
}

std::string forwarded_target(const context& ctx, std::string_view prefix) {
  std::string target(ctx.path().substr(prefix.size()));
  if (target.empty() || target.front() != '/') target.insert(0, "/");
  if (!ctx.outcome().query.empty()) target += "?" + std::string(ctx.outcome().query);
  return target;
}

namespace beast = boost::beast;
using child_websocket = beast::websocket::stream<beast::basic_stream<asio::local::stream_protocol>>;

// Client to child until either side closes; then closes the other side.
asio::awaitable<void> client_to_child(websocket& ws, child_websocket& child) {
  websocket_message m;
  while (co_await ws.read(m)) {
    child.binary(m.binary);
    auto [ec, n] = co_await child.async_write(asio::buffer(m.payload), as_tuple_awaitable);
    if (ec) break;
  }
  beast::websocket::close_reason reason(static_cast<std::uint16_t>(
      ws.closed_with() == close_code::none || ws.closed_with() == close_code::abnormal ? close_code::normal
                                                                                       : ws.closed_with()));
  if (child.is_open()) co_await child.async_close(reason, as_tuple_awaitable);
}

asio::awaitable<void> child_to_client(websocket& ws, child_websocket& child) {
  beast::flat_buffer buffer;
  while (true) {
    auto [ec, n] = co_await child.async_read(buffer, as_tuple_awaitable);
    if (ec) break;
    std::string payload = beast::buffers_to_string(buffer.data());
    buffer.consume(buffer.size());
    bool failed = false;
    try {
      if (child.got_binary()) co_await ws.write_binary(payload);
      else co_await ws.write_text(payload);
    } catch (const boost::system::system_error&) {
      failed = true;
    }
    if (failed) break;
  }
  auto code = child.reason().code;
  co_await ws.close(code ? static_cast<close_code>(code) : close_code::going_away, std::string(child.reason().reason.c_str()));
  // The client's read ends once its close is answered; the child's socket is closed then too.
}

asio::awaitable<void> relay_websocket(context& ctx, websocket& ws, std::shared_ptr<detail::child_supervisor> s,
                                      std::string prefix) {
  lease process = co_await acquire(ctx, s);
  child_websocket child(co_await asio::this_coro::executor);
  auto [connect_ec] = co_await beast::get_lowest_layer(child).async_connect(
      asio::local::stream_protocol::endpoint(process->socket_path), as_tuple_awaitable);
  if (!connect_ec && !process->listener_trusted(beast::get_lowest_layer(child).socket().native_handle()))
    connect_ec = asio::error::access_denied;  // another user's listener: not even the handshake
  if (!connect_ec) {
    child.set_option(beast::websocket::stream_base::timeout::suggested(beast::role_type::client));
    auto [handshake_ec] = co_await child.async_handshake("localhost", forwarded_target(ctx, prefix), as_tuple_awaitable);
    connect_ec = handshake_ec;
  }
  if (connect_ec) {
    co_await ws.close(close_code::try_again_later, "the service " + s->name + " refused the WebSocket");
    co_return;
  }
  auto executor = co_await asio::this_coro::executor;
  co_await asio::experimental::make_parallel_group(
      asio::co_spawn(executor, client_to_child(ws, child), asio::deferred),
      asio::co_spawn(executor, child_to_client(ws, child), asio::deferred))
      .async_wait(asio::experimental::wait_for_all(), use_awaitable);
}

}  // namespace

namespace {

// The child as the host's document and MCP endpoint see it.
class mounted_child final : public detail::mounted_api {
 public:
  mounted_child(std::shared_ptr<detail::child_supervisor> s, std::string prefix)
      : s_(std::move(s)), prefix_(std::move(prefix)) {}
  const std::string& name() const noexcept override { return s_->name; }
  const std::string& prefix() const noexcept override { return prefix_; }
  std::shared_ptr<const nlohmann::ordered_json> document() const override {
    std::lock_guard lock(s_->mutex);
    return s_->document;
  }
  std::shared_ptr<const nlohmann::ordered_json> tools() const override {
    std::lock_guard lock(s_->mutex);
    return s_->tools;
  }
  std::uint64_t version() const noexcept override { return s_->surface_version.load(); }

  awaitable<nlohmann::ordered_json> call_tool(context& ctx, nlohmann::ordered_json params) const override {
    lease process = co_await acquire(ctx, s_);
    request req(http::verb::post, s_->options.mcp_path, 11);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json, text/event-stream");
    // What the host's own tools carry to their routes (mcp.hpp), the caller's credentials first.
    if (auto auth = ctx.header(http::field::authorization); !auth.empty()) req.set(http::field::authorization, auth);
    nlohmann::ordered_json call = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", std::move(params)}};
    req.body() = call.dump();
    response res = co_await process->up.send(ctx, std::move(req));
    auto answer = nlohmann::ordered_json::parse(res.body(), nullptr, false);
    if (!answer.is_object() || (!answer.contains("result") && !answer.contains("error")))
      throw http_error(502, "The service " + s_->name + " answered tools/call with " + std::to_string(res.result_int()) +
                                " and no JSON-RPC answer.");
    co_return answer;
  }

 private:
  std::shared_ptr<detail::child_supervisor> s_;
  std::string prefix_;
};

}  // namespace

void mount(route_scope& scope, std::string_view prefix, std::shared_ptr<child_service> service) {
  if (prefix.empty() || prefix.front() != '/' || prefix.back() == '/')
    throw std::invalid_argument("mount: the prefix must start with '/' and not end with one, not \"" +
                                std::string(prefix) + "\"");
  std::shared_ptr<detail::child_supervisor> s = service->supervisor_;
  std::string pattern = std::string(prefix) + "/{path...}";
  auto forward = [service, s, p = std::string(prefix)](context& ctx) -> awaitable<void> {
    lease process = co_await acquire(ctx, s);
    request out = forwarded_request(ctx, via_token);
    out.target(forwarded_target(ctx, p));
    out.set("X-Request-Id", ctx.request_id());
    std::optional<http_error> failed;
    try {
      co_await process->up.relay(ctx, std::move(out));
    } catch (const http_error& e) {
      if (e.status() != 502) throw;
      failed = e;
    }
    if (!failed) co_return;
    // Killed with this request in flight, or between the acquire and the connect: the
    // service is restarting, which is a 503 as for the requests after (a streamed response
    // already begun is cut either way).
    if (co_await has_exited_within(*process, crash_notice_window))
      throw_unavailable(ctx, *s, "The service " + s->name + " is restarting (pid " + std::to_string(process->pid) +
                                     " exited while answering).");
    throw *failed;
  };
  // A route per method rather than one for all: a method-less pattern would conflict with
  // any method's catch-all of the host ("GET /{path...}"), neither being more specific.
  // Undocumented: the document shows the child's own operations instead (mounted_child).
  route_info hidden{.undocumented = true, .tool = false};
  scope.get(pattern, forward).describe(hidden);
  scope.post(pattern, forward).describe(hidden);
  scope.put(pattern, forward).describe(hidden);
  scope.patch(pattern, forward).describe(hidden);
  scope.del(pattern, forward).describe(hidden);
  serve_websocket(scope, pattern,
                  [service, s, p = std::string(prefix)](context& ctx, websocket& ws) {
                    return relay_websocket(ctx, ws, s, p);
                  });
  // The composed prefix, a group's included: the GET route's pattern without its method,
  // host and "/{path...}".
  std::string_view composed = scope.last_route().route_pattern().text();
  composed.remove_prefix(composed.find('/'));
  composed.remove_suffix(std::string_view("/{path...}").size());
  scope.app().extension<detail::mounted_apis>().list.push_back(
      std::make_shared<mounted_child>(s, std::string(composed)));
}

}  // namespace waypoint::app
