// The application as waypoint::beast::server's dispatch.
#include "waypoint/app/serve.hpp"

namespace waypoint::app {

beast::exchange_function dispatch_to(application& app) {
  app.freeze();
  return [&app](beast::exchange& x) { app.dispatch(x); };
}

beast::server_options with_problem_errors(beast::server_options options) {
  if (!options.render_error) options.render_error = render_problem;
  return options;
}

void serve(application& app, const beast::server_options& options) {
  beast::server server(with_problem_errors(options), dispatch_to(app));
  server.run();
}

}  // namespace waypoint::app
