// The gateway's typed JSON routes, written with waypoint::app:
//
//   waypoint::app::application app({}, waypoint::app::typed_route_options{.json_body_limit = 64 * 1024});
//   waypoint::examples::add_order_routes(app);
//
// POST /v1/commerce/orders (below), and an order book per organisation whose inputs come from
// the path, the query and headers as well as the body (waypoint/app/typed/inputs.hpp):
//
//   $ org=localhost:8080/v1/orgs/acme/orders; json='Content-Type: application/json'
//   $ curl -i $org -H "$json" -d '{"sku":"KB-101","quantity":2,"email":"ada@example.com"}'  # 201
//   $ curl -i $org -H "$json" -d '{"sku":"kb","quantity":5000,"email":"ada"}'  # 422 /sku pattern
//   $ curl -i "$org?limit=2"                     # 200, ETag, and next_cursor when there is more
//   $ curl -i "$org?limit=2" -H 'If-None-Match: "<the ETag>"'           # 304 until an order lands
//   $ curl -i "$org?limit=500"                   # 422: limit's maximum is 100
//   $ curl -i "$org?limit=two"                   # 400: limit must be an integer
//   $ curl -i "$org?cursor=-1"                   # 422: cursor's minimum is 0 (a uint32)
//
// The book is bounded in bytes (org_order_book below): a client past its share (1 MiB) is
// answered 507, and so is every client once the whole (64 MiB) is full; nothing taken is
// ever dropped to make room.
//
// Request {"sku": string, "quantity": integer >= 1}; answer 201 with
// {"id": string, "sku": ..., "quantity": ...} and Location. Every error of a typed route can
// be produced with curl (port 8080 as in examples/gateway.cpp):
//
//   $ url=localhost:8080/v1/commerce/orders; json='Content-Type: application/json'
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":2}'     # 201
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":2'      # 400 malformed, byte 29
//   $ curl -i $url -H "$json" -d '{"quantity":2}'                    # 422 pointer /sku
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":"2"}'   # 422 pointer /quantity
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":0}'     # 422 /quantity, minimum
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":1e400}' # 400 number overflow
//   $ curl -i $url -d 'sku=KB-101'                                   # 415 (form encoding)
//   $ head -c 70000 /dev/zero | curl -i $url -H "$json" --data-binary @-   # 413
//   $ curl -i $url -H "$json" -d '{"sku":"SOLD-OUT","quantity":1}'   # 409 from http_error
//   $ curl -i $url -H "$json" -d '{"sku":"FAULTY","quantity":1}'     # 500, cause only logged
//   $ curl -i -X PUT $url          # 405 with Allow: GET, HEAD, POST (the gateway's own router)
//
// SOLD-OUT and FAULTY stand in for an inventory that refuses and one that fails.
#pragma once

#include <waypoint/app/operations/forwarded.hpp>
#include <waypoint/app/typed/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waypoint::examples {

struct order_request {
  std::string sku;
  std::int64_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(order_request, sku, quantity)

// Found by argument-dependent lookup: a JSON merge patch of the type's schema, which the
// OpenAPI document shows and the route enforces (a 422 naming the member and the keyword).
inline nlohmann::ordered_json schema_constraints(const order_request*) {
  return {{"properties", {{"sku", {{"minLength", 1}}}, {"quantity", {{"minimum", 1}}}}}};
}

struct order {
  std::string id;
  std::string sku;
  std::int64_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(order, id, sku, quantity)

// --- an order book per organisation ----------------------------------------------------

struct org_order_request {
  std::string sku;
  std::int64_t quantity = 0;
  std::string email;                      // who to tell when it ships
  std::optional<std::string> deliver_by;  // a date
  std::optional<std::string> note;
};
WAYPOINT_JSON_STRICT_OBJECT(org_order_request, sku, quantity, email, deliver_by, note)

inline nlohmann::ordered_json schema_constraints(const org_order_request*) {
  return {{"properties",
           {{"sku", {{"pattern", "^[A-Z0-9][A-Z0-9-]{1,31}$"}}},
            {"quantity", {{"minimum", 1}, {"maximum", 1000}}},
            {"email", {{"format", "email"}, {"maxLength", 254}}},
            {"deliver_by", {{"format", "date"}}},
            {"note", {{"maxLength", 280}}}}}};
}

struct org_order {
  std::string id;
  std::string org;
  std::string sku;
  std::int64_t quantity = 0;
  std::string email;
  std::optional<std::string> deliver_by;
  std::optional<std::string> note;
};
WAYPOINT_JSON_OBJECT(org_order, id, org, sku, quantity, email, deliver_by, note)

struct order_page {
  std::vector<org_order> orders;
  std::optional<std::uint32_t> next_cursor;  // absent on the last page
};
WAYPOINT_JSON_OBJECT(order_page, orders, next_cursor)

// An organisation's name in a path: the constraint both routes document and enforce.
inline constexpr std::string_view org_name_schema = R"({"pattern":"^[a-z0-9][a-z0-9-]{0,31}$"})";

struct place_org_order {
  std::string org;
  org_order_request order;
  static constexpr auto inputs = app::inputs(
      app::from::path("org", &place_org_order::org)
          .describe("the organisation")
          .constraints(org_name_schema),
      app::from::body(&place_org_order::order));
};

struct list_org_orders {
  std::string org;
  std::optional<std::uint32_t> cursor;
  std::int32_t limit = 20;
  std::optional<std::string> if_none_match;
  static constexpr auto inputs = app::inputs(
      app::from::path("org", &list_org_orders::org)
          .describe("the organisation")
          .constraints(org_name_schema),
      app::from::query("cursor", &list_org_orders::cursor)
          .describe("where the page starts: a next_cursor from an earlier page"),
      app::from::query("limit", &list_org_orders::limit)
          .describe("the most orders on the page")
          .or_default()
          .constraints(R"({"minimum":1,"maximum":100})"),
      app::from::header("If-None-Match", &list_org_orders::if_none_match)
          .describe("the ETag of a page already held: 304 while it is current"));
};

// --- what the order book holds, in bytes ----------------------------------------------

// The heap bytes glibc's malloc takes for a request of `n` bytes: the request and its 8-byte
// header rounded up to 16, and never less than 32 (the smallest chunk).
constexpr std::size_t heap_chunk(std::size_t n) noexcept {
  return std::max<std::size_t>(32, (n + 8 + 15) & ~std::size_t{15});
}

// What a string holds on the heap: nothing while its text fits in the object itself (the
// short-string buffer), else a chunk of its capacity and terminator.
inline std::size_t heap_bytes(const std::string& s) noexcept {
  const char* object = reinterpret_cast<const char*>(&s);
  std::less<const char*> before;
  bool inside = !before(s.data(), object) && before(s.data(), object + sizeof s);
  return inside ? 0 : heap_chunk(s.capacity() + 1);
}

inline std::size_t heap_bytes(const std::optional<std::string>& s) noexcept {
  return s ? heap_bytes(*s) : 0;
}

// The limits of an org_order_book, in the bytes order_footprint and organisation_footprint
// count.
struct order_book_limits {
  // Every organisation's orders together: the most the book makes the process hold.
  std::size_t max_bytes = 64u << 20;
  // What the orders one client placed may hold, across organisations: its fair share, so
  // that it takes max_bytes / max_client_bytes = 64 clients at their share to fill the book.
  std::size_t max_client_bytes = 1u << 20;
};

// The orders of every organisation, in memory and bounded in bytes, counted as the heap
// counts them (order_footprint, organisation_footprint): the total never passes max_bytes,
// and what one client placed never passes max_client_bytes. Past either the order is refused
// (507 naming the bound) and nothing held is touched: an order once taken is never dropped to
// make room for another, so no client can make another's orders vanish. The organisation's
// name in the path is no credential, so the share is the client's (its address, which the
// caller gives), not the organisation's: a client making organisations at will fills its own
// share and no more, and a stranger cannot fill an organisation's book to lock it out.
//
// What it costs at most, with the defaults: 64 MiB of heap for orders and their bookkeeping,
// 1 MiB of it for one client. The largest order the contract allows is 1,800 bytes counted (a
// 1,120-byte note, a 254-byte email, 32-character names), so 37,000 of them in all, 580 from
// one client; the smallest is 248 bytes (270,000; 4,200). A full book (64 clients at their
// share) refuses every order until a restart: the example's capacity, where a real store has
// accounts and a disk. OrderBook.HoldsNoMoreHeapThanItsCapAndCountsWhatItHolds measures the
// heap: the count is within 10% of it, and never below.
class org_order_book {
 public:
  explicit org_order_book(order_book_limits limits = {}) : limits_(limits) {
    if (limits_.max_client_bytes > limits_.max_bytes)
      throw std::invalid_argument("org_order_book: max_client_bytes above max_bytes");
  }

  // The order placed for `org` by `client`, and its place in the organisation's book (a
  // cursor that starts there).
  std::pair<org_order, std::size_t> place(const std::string& org, std::string_view client,
                                          org_order_request in) {
    auto placed = std::make_unique<org_order>(org_order{
        {}, org, std::move(in.sku), in.quantity, std::move(in.email), std::move(in.deliver_by),
        std::move(in.note)});
    std::lock_guard lock(mutex_);
    placed->id = org + "-" + std::to_string(last_id_ + 1);
    auto book = books_.find(org);
    auto share = clients_.find(client);
    std::size_t cost = order_footprint(*placed) +
                       (book == books_.end() ? organisation_footprint(org) : 0) +
                       (share == clients_.end() ? client_footprint(client) : 0);
    std::size_t held = share == clients_.end() ? 0 : share->second;
    if (held + cost > limits_.max_client_bytes)
      throw http_error(507, "the orders this client placed hold the most this example keeps "
                            "for one client (" + std::to_string(limits_.max_client_bytes) + " bytes)");
    if (bytes_ + cost > limits_.max_bytes)
      throw http_error(507, "the order book holds the most this example keeps (" +
                                std::to_string(limits_.max_bytes) + " bytes of orders)");
    ++last_id_;
    if (book == books_.end()) book = books_.emplace(org, book_orders{}).first;
    if (share == clients_.end()) share = clients_.emplace(std::string(client), 0).first;
    share->second += cost;
    bytes_ += cost;
    book->second.push_back(std::move(placed));
    return {*book->second.back(), book->second.size() - 1};
  }

  // The page from `start`, and its ETag: the organisation's order count and the page's place,
  // which change exactly when the page's content does (orders are only ever appended).
  order_page page(const std::string& org, std::size_t start, std::size_t limit,
                  std::string& etag) const {
    std::lock_guard lock(mutex_);
    order_page out;
    auto it = books_.find(org);
    std::size_t count = it == books_.end() ? 0 : it->second.size();
    for (std::size_t i = start; i < count && out.orders.size() < limit; ++i)
      out.orders.push_back(*it->second[i]);
    if (start + out.orders.size() < count)
      out.next_cursor = static_cast<std::uint32_t>(start + out.orders.size());
    etag = "\"" + std::to_string(count) + "." + std::to_string(start) + "." +
           std::to_string(limit) + "\"";
    return out;
  }

  // The bytes held, as counted: never above limits().max_bytes.
  std::size_t bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
  }
  const order_book_limits& limits() const noexcept { return limits_; }

  // What an order costs the book: the order itself (a heap object, so that the book's vector
  // moves pointers as it grows), the heap its strings hold, and three pointers: its slot in
  // the vector, the free slot a doubling vector may keep per used one, and the old buffer's
  // slot while the vector grows.
  static std::size_t order_footprint(const org_order& o) noexcept {
    return heap_chunk(sizeof(org_order)) + 3 * sizeof(void*) + heap_bytes(o.id) +
           heap_bytes(o.org) + heap_bytes(o.sku) + heap_bytes(o.email) +
           heap_bytes(o.deliver_by) + heap_bytes(o.note);
  }

 private:
  using book_orders = std::vector<std::unique_ptr<org_order>>;  // oldest first
  using book_map = std::map<std::string, book_orders, std::less<>>;
  using share_map = std::map<std::string, std::size_t, std::less<>>;

  // A map node: the tree's four words and the entry, plus the heap of its key.
  template <class Map>
  static std::size_t node_footprint(std::string_view key) noexcept {
    std::size_t key_heap = key.size() < 16 ? 0 : heap_chunk(key.size() + 1);
    return heap_chunk(4 * sizeof(void*) + sizeof(typename Map::value_type)) + key_heap;
  }
  // An organisation before its orders: its node, charged to the client that opened it.
  static std::size_t organisation_footprint(std::string_view name) noexcept {
    return node_footprint<book_map>(name);
  }
  // A client's share's own node.
  static std::size_t client_footprint(std::string_view client) noexcept {
    return node_footprint<share_map>(client);
  }

  order_book_limits limits_;
  mutable std::mutex mutex_;  // guards everything below
  book_map books_;
  share_map clients_;  // bytes each client's orders hold (with what they opened)
  std::size_t bytes_ = 0;  // invariant: the sum of clients_'s values
  std::uint64_t last_id_ = 0;
};

// Registers POST /v1/commerce/orders on `scope` (an application or a group). Order ids
// come from a counter shared by the route's copies, so ids are unique per process.
inline void add_order_routes(app::route_scope& scope) {
  auto last_id = std::make_shared<std::atomic<std::uint64_t>>(0);
  scope.post<order_request, order>(
      "/v1/commerce/orders", [last_id](app::context& ctx, order_request in) {
        if (in.sku == "SOLD-OUT") throw http_error(409, "sku SOLD-OUT is out of stock");
        if (in.sku == "FAULTY") throw std::runtime_error("inventory service timed out");
        order placed{"ord-" + std::to_string(++*last_id), std::move(in.sku), in.quantity};
        ctx.response().header("Location", "/v1/commerce/orders/" + placed.id);
        return placed;
      })
      .describe({.name = "placeOrder",
                 .summary = "Place an order",
                 .description = "Reserves `quantity` of `sku` and answers the order with its id."});

  auto book = std::make_shared<org_order_book>();
  scope.post<place_org_order, org_order>(
      "/v1/orgs/{org}/orders", [book](app::context& ctx, place_org_order in) {
        auto [placed, position] =
            book->place(in.org, app::client_address(ctx, {}), std::move(in.order));
        ctx.response().header("Location", "/v1/orgs/" + in.org + "/orders?cursor=" +
                                              std::to_string(position) + "&limit=1");
        return placed;
      })
      .describe({.name = "placeOrgOrder",
                 .summary = "Place an order for an organisation",
                 .description = "The body's constraints (a SKU's shape, a quantity from 1 to "
                                "1000, an email, a date) are the schema's, enforced with a 422 "
                                "naming the member."});
  scope.get<order_page>("/v1/orgs/{org}/orders",
                        [book](app::context& ctx, const list_org_orders& in) {
                          std::string etag;
                          order_page out = book->page(in.org, in.cursor.value_or(0),
                                                      static_cast<std::size_t>(in.limit), etag);
                          ctx.response().header("ETag", etag);
                          return out;
                        })
      .describe({.name = "listOrgOrders",
                 .summary = "List an organisation's orders, a page at a time",
                 .description = "Oldest first. Send the page's ETag back in If-None-Match to get "
                                "304 while no order has landed on it."});
}

}  // namespace waypoint::examples
