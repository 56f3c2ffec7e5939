// The application as waypoint::beast::server's dispatch.
#include "waypoint/app/serve.hpp"

namespace waypoint::app {

beast::dispatch_function dispatch_to(application& app) {
  app.freeze();
  return [&app](const beast::request& req, beast::response& res) { app.respond(req, res); };
}

void serve(application& app, const beast::server_options& options) {
  beast::server server(options, dispatch_to(app));
  server.run();
}

}  // namespace waypoint::app
