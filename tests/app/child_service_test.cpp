// child_service and mount(): the supervisor's rules (start, readiness, lazy start, idle stop,
// crash restart, reload with drain, stop with escalation, what the child inherits) against
// a real child process, tests/app/child_fixture.py, and forwarding through a real server.
#include "loopback_client.hpp"

#include <waypoint/app/services/child_service.hpp>
#include <waypoint/app/documents/mcp.hpp>
#include <waypoint/app/documents/openapi.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace wa = waypoint::app;
using namespace std::chrono_literals;
using wa::testing::exchange;
using wa::testing::loopback_server;
using json = nlohmann::json;

const std::string fixture = WAYPOINT_CHILD_FIXTURE;

// A directory of its own per test, for the sockets and the fixture's mode file.
struct scratch_dir {
  std::string path;
  scratch_dir() {
    std::string pattern = std::filesystem::temp_directory_path() / "waypoint-child-XXXXXX";
    path = ::mkdtemp(pattern.data());
  }
  ~scratch_dir() { std::filesystem::remove_all(path); }
};

wa::child_service_options fixture_options(const scratch_dir& dir, std::vector<std::string> extra = {}) {
  wa::child_service_options o;
  o.command = {"/usr/bin/python3", fixture, "--unix", "{socket}"};
  o.command.insert(o.command.end(), extra.begin(), extra.end());
  o.socket_directory = dir.path;
  o.start_timeout = 10s;
  o.stop_timeout = 2s;
  o.logger = [](std::string_view) {};
  return o;
}

bool process_exists(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH); }

// Polls `done` every 10 ms for up to `limit`.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
  for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

wa::request get(std::string target, wa::http::verb method = wa::http::verb::get) {
  wa::request req(method, target, 11);
  req.set(wa::http::field::host, "localhost");
  return req;
}

struct mounted {
  wa::application app;
  std::shared_ptr<wa::child_service> child;
  std::unique_ptr<loopback_server> server;
  mounted(const std::string& name, wa::child_service_options options,
          const std::function<void(wa::application&)>& more = {}) {
    child = std::make_shared<wa::child_service>(name, std::move(options));
    wa::mount(app, "/svc", child);
    if (more) more(app);
    server = std::make_unique<loopback_server>(app);
  }
  wa::response fetch(std::string target, wa::http::verb method = wa::http::verb::get) {
    return exchange(server->port(), {get(std::move(target), method)}).front();
  }
};

pid_t pid_of(const wa::response& res) { return json::parse(res.body())["pid"].get<pid_t>(); }

TEST(ChildService, RefusesBadOptionsNamingWhatIsWrong) {
  scratch_dir dir;
  std::string plain_file = dir.path + "/not-a-program";
  std::ofstream(plain_file) << "#!/bin/sh\n";  // mode 0644: no execute bit
  struct row {
    std::string name;
    std::function<void(wa::child_service_options&)> change;
    std::string says;
  };
  std::vector<row> rows = {
      {"ok-name", [](auto& o) { o.command.clear(); }, "the command is empty"},
      {"ok-name", [](auto& o) { o.command = {"python3"}; }, "must be an absolute path, not \"python3\""},
      {"ok-name", [](auto& o) { o.command = {"/no/such/program"}; }, "/no/such/program is not an executable file"},
      {"ok-name", [&](auto& o) { o.command = {plain_file}; }, plain_file + " is not an executable file"},
      {"ok-name", [](auto& o) { o.command = {"/tmp"}; }, "/tmp is not an executable file"},
      {"ok-name", [](auto& o) { o.ready_path = "healthz"; }, "ready_path must start with '/'"},
      {"ok-name", [](auto& o) { o.start_timeout = 0ms; }, "start_timeout must be positive"},
      {"ok-name", [](auto& o) { o.restart_delay = -1ms; }, "restart_delay must be positive"},
      {"ok-name", [](auto& o) { o.idle_stop = -1ms; }, "idle_stop must not be negative"},
      {"a/b", [](auto&) {}, "the name must be letters, digits, '-' and '_'"},
      {"ok-name", [](auto& o) { o.socket_directory = "/tmp/" + std::string(90, 'd'); },
       "over the 107 a unix socket allows"},
  };
  for (const row& r : rows) {
    wa::child_service_options o = fixture_options(dir);
    r.change(o);
    try {
      wa::child_service service(r.name, o);
      ADD_FAILURE() << "accepted; expected: " << r.says;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.says), std::string::npos) << e.what();
    }
  }
}

TEST(ChildService, StartFailsNamingHowTheProcessEnded) {
  scratch_dir dir;
  wa::child_service_options o = fixture_options(dir);
  o.command = {"/bin/false"};
  o.restart_delay = 10s;  // one attempt in this test
  wa::child_service service("false", o);
  try {
    service.start().get();
    ADD_FAILURE() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 1"), std::string::npos) << e.what();
  }
  wa::child_status s = service.status();
  EXPECT_EQ(s.state, wa::child_state::crashed);
  EXPECT_EQ(s.crashes, 1u);
  EXPECT_NE(s.last_error.find("exited with status 1"), std::string::npos) << s.last_error;
}

TEST(ChildService, StartFailsAndKillsAChildNeverReady) {
  scratch_dir dir;
  wa::child_service_options o = fixture_options(dir, {"--never-ready"});
  o.start_timeout = 600ms;
  o.restart_delay = 10s;
  wa::child_service service("never", o);
  std::string error;
  try {
    service.start().get();
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("was not ready within 600 ms (/healthz answered 503)"), std::string::npos) << error;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(error, m, std::regex("pid (\\d+)"))) << error;
  EXPECT_FALSE(process_exists(std::stoi(m[1]))) << "the child that never became ready still runs";
}

// Issue #44: the socket was /tmp/waypoint-<name>-<pid>-<generation>.sock, a name another
// local user could take first. It is in a directory of the service's own now.
TEST(ChildService, SocketsAreInADirectoryOfTheirOwnRemovedAtStop) {
  scratch_dir dir;
  ::chmod(dir.path.c_str(), 01777);  // as /tmp is: anyone may create files in it
  wa::child_service service("private", fixture_options(dir));
  service.start().get();
  std::vector<std::filesystem::path> entries(std::filesystem::directory_iterator(dir.path), {});
  ASSERT_EQ(entries.size(), 1u) << "one directory of the service's in " << dir.path;
  struct stat own {};
  ASSERT_EQ(::lstat(entries[0].c_str(), &own), 0);
  EXPECT_TRUE(S_ISDIR(own.st_mode)) << entries[0];
  EXPECT_EQ(own.st_mode & 0777, 0700u) << entries[0];
  EXPECT_EQ(own.st_uid, ::geteuid()) << entries[0];
  EXPECT_TRUE(entries[0].filename().string().starts_with("waypoint-private-")) << entries[0];
  EXPECT_TRUE(std::filesystem::is_socket(entries[0] / "1.sock")) << "the child's socket is in it";
  service.stop().get();
  EXPECT_TRUE(std::filesystem::is_empty(dir.path)) << "the directory outlived stop()";
}

// A listener at the child's socket that is neither the child nor this user's (the fixture's
// --planted: bound, then listening as nobody from another pid) is sent nothing, not even the
// readiness probe: the start fails naming it. The same listener of this user's would have
// been trusted; the directory keeps other users from binding there, this keeps one that
// did anyway (a directory of theirs as socket_directory) from being sent a request.
TEST(ChildService, SendsNothingToAListenerOfAnotherUser) {
  scratch_dir dir;
  ::chmod(dir.path.c_str(), 01777);
  std::string log = dir.path + "/planted.log";
  wa::child_service_options o = fixture_options(dir, {"--planted", log});
  o.start_timeout = 800ms;
  o.restart_delay = 10s;
  wa::child_service service("planted", o);
  std::string error;
  try {
    service.start().get();
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("(uid 65534), which it does not trust; nothing was sent"), std::string::npos)
      << "the start should fail naming the listener; got: " << error;
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(log); })) << "the planted listener never listened";
  std::ifstream received(log, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(received)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes, "") << "the planted listener received a request";
}

TEST(ChildService, ForwardsThePrefixWithProxyFieldsHeadBodiesAndStreams) {
  scratch_dir dir;
  mounted m("fwd", fixture_options(dir));
  m.child->start().get();
  ASSERT_EQ(m.child->status().state, wa::child_state::running);

  wa::response hello = m.fetch("/svc/hello?x=1");
  ASSERT_EQ(hello.result_int(), 200) << hello.body();
  json seen = json::parse(hello.body());
  EXPECT_EQ(seen["target"], "/hello?x=1");  // the prefix removed, the query kept
  EXPECT_EQ(seen["via"], "1.1 waypoint");
  EXPECT_EQ(seen["x_forwarded_for"], "127.0.0.1");
  EXPECT_EQ(seen["pid"].get<pid_t>(), m.child->status().pid);

  wa::response head = m.fetch("/svc/hello?x=1", wa::http::verb::head);
  EXPECT_EQ(head.result_int(), 200);
  EXPECT_EQ(head[wa::http::field::content_length], hello[wa::http::field::content_length]);
  EXPECT_TRUE(head.body().empty());

  wa::request post = get("/svc/echo", wa::http::verb::post);
  post.body() = std::string(300 * 1024, 'x') + "end";
  wa::response echoed = exchange(m.server->port(), {post}).front();
  EXPECT_EQ(echoed.result_int(), 200);
  EXPECT_EQ(echoed.body(), post.body());

  // A chunked answer is passed on chunked, as it arrives: whole at the end.
  wa::response streamed = m.fetch("/svc/stream");
  EXPECT_EQ(streamed.result_int(), 200);
  EXPECT_TRUE(streamed.chunked());
  EXPECT_EQ(streamed.body(), "one\ntwo\nthree\n");

  EXPECT_EQ(m.fetch("/svc/nothing-here").result_int(), 404);  // the child's own 404
}

TEST(ChildService, InheritsNoDescriptorOfTheParent) {
  scratch_dir dir;
  int leak[2];
  ASSERT_EQ(::pipe(leak), 0);  // no O_CLOEXEC: fork would pass it on, exec would keep it
  mounted m("fds", fixture_options(dir));
  m.child->start().get();
  wa::response fds = m.fetch("/svc/fds");
  ASSERT_EQ(fds.result_int(), 200);
  struct stat st {};
  ::fstat(leak[0], &st);
  std::string pipe_name = "pipe:[" + std::to_string(st.st_ino) + "]";
  json seen = json::parse(fds.body());
  ASSERT_GE(seen.size(), 3u) << fds.body();
  for (const auto& entry : seen.items())
    EXPECT_NE(entry.value().get<std::string>(), pipe_name) << "descriptor " << entry.key() << " came from the parent";
  ::close(leak[0]);
  ::close(leak[1]);
}

TEST(ChildService, LazyStartsAtTheFirstRequestAndStopsWhenIdle) {
  scratch_dir dir;
  wa::child_service_options o = fixture_options(dir);
  o.lazy = true;
  o.idle_stop = 300ms;
  mounted m("lazy", o);
  m.child->start().get();  // a lazy start starts nothing
  EXPECT_EQ(m.child->status().state, wa::child_state::stopped);
  EXPECT_EQ(m.child->status().pid, 0);

  wa::response first = m.fetch("/svc/hello");
  ASSERT_EQ(first.result_int(), 200) << first.body();
  pid_t pid = pid_of(first);
  EXPECT_TRUE(process_exists(pid));
  EXPECT_TRUE(eventually([&] { return !process_exists(pid); })) << "still running after idle_stop";
  EXPECT_EQ(m.child->status().state, wa::child_state::stopped);

  wa::response again = m.fetch("/svc/hello");  // started anew
  ASSERT_EQ(again.result_int(), 200);
  EXPECT_NE(pid_of(again), pid);
  EXPECT_EQ(m.child->status().generation, 2u);
}

TEST(ChildService, CrashIsAnswered503WithRetryAfterThenRestarted) {
  scratch_dir dir;
  wa::child_service_options o = fixture_options(dir);
  o.restart_delay = 500ms;
  mounted m("crash", o);
  m.child->start().get();
  pid_t first = m.child->status().pid;
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return m.child->status().state != wa::child_state::running; }));

  wa::response down = m.fetch("/svc/hello");
  EXPECT_EQ(down.result_int(), 503);
  EXPECT_EQ(down[wa::http::field::content_type], "application/problem+json");
  EXPECT_EQ(down[wa::http::field::retry_after], "1");
  EXPECT_NE(down.body().find("restarting"), std::string::npos) << down.body();
  EXPECT_NE(down.body().find("killed by signal"), std::string::npos) << down.body();

  ASSERT_TRUE(eventually([&] { return m.child->status().state == wa::child_state::running; }));
  wa::response up = m.fetch("/svc/hello");
  ASSERT_EQ(up.result_int(), 200);
  EXPECT_NE(pid_of(up), first);
  EXPECT_EQ(m.child->status().crashes, 1u);
}

TEST(ChildService, ReloadSwitchesTrafficAndDrainsTheOldProcessWithoutFailingItsRequest) {
  scratch_dir dir;
  mounted m("reload", fixture_options(dir));
  m.child->start().get();
  pid_t old_pid = m.child->status().pid;

  wa::response slow;
  std::thread in_flight([&] { slow = m.fetch("/svc/slow?ms=800"); });
  std::this_thread::sleep_for(200ms);  // the slow request reaches the old child first
  m.child->reload().get();
  pid_t new_pid = m.child->status().pid;
  EXPECT_NE(new_pid, old_pid);
  EXPECT_EQ(pid_of(m.fetch("/svc/hello")), new_pid);
  in_flight.join();
  EXPECT_EQ(slow.result_int(), 200);
  EXPECT_EQ(slow.body(), "slow from pid " + std::to_string(old_pid) + "\n");
  EXPECT_TRUE(eventually([&] { return !process_exists(old_pid); })) << "the old process was not stopped";
  EXPECT_EQ(m.child->status().reloads, 1u);
}

TEST(ChildService, FailedReloadLeavesTheOldProcessServing) {
  scratch_dir dir;
  std::string mode = dir.path + "/mode";
  std::ofstream(mode) << "good";
  mounted m("badbuild", fixture_options(dir, {"--mode-file", mode}));
  m.child->start().get();
  pid_t pid = m.child->status().pid;
  std::ofstream(mode) << "broken";
  try {
    m.child->reload().get();
    ADD_FAILURE() << "the reload succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(m.child->status().state, wa::child_state::running);
  EXPECT_EQ(pid_of(m.fetch("/svc/hello")), pid);
}

TEST(ChildService, StopSendsSigkillWhenSigtermIsIgnored) {
  scratch_dir dir;
  wa::child_service_options o = fixture_options(dir, {"--ignore-term"});
  o.stop_timeout = 300ms;
  mounted m("stubborn", o);
  m.child->start().get();
  pid_t pid = m.child->status().pid;
  auto began = std::chrono::steady_clock::now();
  m.child->stop().get();
  EXPECT_GE(std::chrono::steady_clock::now() - began, 300ms);
  EXPECT_FALSE(process_exists(pid));
  EXPECT_EQ(m.child->status().state, wa::child_state::stopped);
  wa::response after = m.fetch("/svc/hello");
  EXPECT_EQ(after.result_int(), 503);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path)) << "a socket file was left behind";
}

// Every "$ref" in `v` names a component `doc` holds.
void expect_refs_resolve(const json& doc, const json& v) {
  if (v.is_array())
    for (const json& item : v) expect_refs_resolve(doc, item);
  if (!v.is_object()) return;
  for (const auto& entry : v.items()) {
    if (entry.key() == "$ref" && entry.value().is_string()) {
      std::string ref = entry.value().get<std::string>();
      EXPECT_TRUE(ref.starts_with("#/") && doc.contains(json::json_pointer(ref.substr(1)))) << ref;
    } else {
      expect_refs_resolve(doc, entry.value());
    }
  }
}

json rpc(mounted& m, const std::string& body) {
  wa::request req = get("/mcp", wa::http::verb::post);
  req.set(wa::http::field::content_type, "application/json");
  req.body() = body;
  return json::parse(exchange(m.server->port(), {req}).front().body());
}

struct documented_host : mounted {
  static wa::child_service_options example_child(const scratch_dir& dir) {
    wa::child_service_options o = fixture_options(dir);
    o.command = {WAYPOINT_EXAMPLE_CHILD, "--unix", "{socket}"};
    return o;
  }
  explicit documented_host(const scratch_dir& dir) : mounted("kid", example_child(dir), [](wa::application& app) {
    app.get("/own", [](wa::context& ctx) { ctx.response().body("own"); }).describe({.name = "own"});
    wa::serve_openapi(app, {.title = "host"});
    wa::serve_mcp(app);
  }) {}
};

TEST(ChildService, HostDocumentShowsTheChildsOperationsUnderThePrefixOnceStarted) {
  scratch_dir dir;
  documented_host m(dir);
  json before = json::parse(m.fetch("/openapi.json").body());
  EXPECT_FALSE(before["paths"].contains("/svc/greetings")) << "documented before the child ran";
  EXPECT_FALSE(before["paths"].contains("/svc/{path}")) << "the forwarding routes are documented";

  m.child->start().get();
  json doc = json::parse(m.fetch("/openapi.json").body());
  ASSERT_TRUE(doc["paths"].contains("/svc/greetings")) << doc["paths"].dump();
  const json& op = doc["paths"]["/svc/greetings"]["post"];
  EXPECT_EQ(op["operationId"], "kid.greet");
  EXPECT_EQ(op["tags"], json::array({"kid"}));
  EXPECT_FALSE(op.contains("x-waypoint-pattern"));
  EXPECT_EQ(op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/kid.greeting_request");
  EXPECT_TRUE(doc["components"]["schemas"].contains("kid.greeting"));
  EXPECT_FALSE(doc["components"]["schemas"].contains("kid.Problem")) << "an identical component is shared";
  EXPECT_TRUE(doc["paths"].contains("/own"));
  expect_refs_resolve(doc, doc);
}

TEST(ChildService, HostMcpListsAndForwardsTheChildsTools) {
  scratch_dir dir;
  documented_host m(dir);
  m.child->start().get();
  json list = rpc(m, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  std::vector<std::string> names;
  for (const json& t : list["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"kid.greet"})) << list.dump();

  json called = rpc(m, R"({"jsonrpc":"2.0","id":7,"method":"tools/call",
                           "params":{"name":"kid.greet","arguments":{"name":"Ada"}}})");
  EXPECT_EQ(called["id"], 7);
  EXPECT_EQ(called["result"]["structuredContent"]["text"], "Hello, Ada!") << called.dump();
  EXPECT_EQ(called["result"]["structuredContent"]["pid"], m.child->status().pid);

  json refused = rpc(m, R"({"jsonrpc":"2.0","id":8,"method":"tools/call",
                            "params":{"name":"kid.greet","arguments":{"name":""}}})");
  EXPECT_EQ(refused["result"]["isError"], true) << refused.dump();

  json unknown = rpc(m, R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"kid.nothing"}})");
  EXPECT_EQ(unknown["error"]["code"], -32602) << unknown.dump();
}

}  // namespace
