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

beast::server_options options_for(application& app, beast::server_options options) {
  if (!options.plan_body) {
    options.plan_body = [&app, limit = options.max_body_bytes](const request& header) {
      return app.plan_body(header, limit);
    };
  }
  return with_problem_errors(std::move(options));
}

void serve(application& app, const beast::server_options& options) {
  beast::server server(options_for(app, options), dispatch_to(app));
  server.run();
}

}  // namespace waypoint::app
