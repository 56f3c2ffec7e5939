// A server dispatch that answers later, as docs/server.md shows it: the exchange is
// deferred, a worker pool of the program's computes the answer, and send() hands it back.
// Compiled by tests/docs/check.
#include <waypoint/beast/server.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <string>

int main() {
  boost::asio::thread_pool pool(2);
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 8080}};
  waypoint::beast::server s(options, [&](waypoint::beast::exchange& x) {
    std::string target(x.request().target());  // the request lives on; copy for the other thread
    boost::asio::post(pool, [target, &res = x.response(), later = x.defer()]() mutable {
      res.body() = "computed for " + target + "\n";
      later.send();
    });
  });
  s.run();
}
