// The topic hub: who is in which topic (under the hub's mutex), and each subscriber's
// mailbox, a bounded queue of shared payloads that its connection's coroutine drains.
//
// Waking a drain: a publisher on another thread cannot touch the connection's objects, so it
// posts a task to the connection's executor that cancels the drain's idle timer. `wake_posted`
// keeps that to one task in flight however fast messages come; the drain looks at the queue
// before it waits, on the same executor as the task, so a wake is never lost between the two.
#include "waypoint/app/realtime/topics.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <stdexcept>
#include <utility>

namespace waypoint::app {

namespace asio = boost::asio;

namespace {

// One publish, shared by every queue it is in.
struct published {
  std::string payload;
  bool binary = false;
};

}  // namespace

namespace detail {

struct topic_mailbox {
  // The bounds of one queue: copied from the hub's options (not the options themselves,
  // which hold the broker).
  struct bounds {
    std::size_t max_queued_bytes;
    std::size_t max_queued_messages;
    overflow_policy on_overflow;
  };

  topic_mailbox(asio::any_io_executor executor, const topic_hub_options& options,
                std::shared_ptr<topic_hub::counters> counters)
      : executor(executor), wake(executor),
        limits{options.max_queued_bytes, options.max_queued_messages, options.on_overflow},
        counters(std::move(counters)) {}

  // Queues `message` under the policy; false when this connection will not get it. A
  // message larger than the whole queue (one from another instance: the hub refuses its
  // own) is dropped for every connection alike, under either policy: it says nothing about
  // this connection's pace, so it closes none.
  bool offer(const std::shared_ptr<const published>& message) {
    std::size_t size = message->payload.size();
    if (size > limits.max_queued_bytes) {
      ++counters->dropped;
      return false;
    }
    bool queued = false;
    {
      std::lock_guard lock(mutex);
      if (!open || closing || finish) return false;
      bool fits = true;
      while (bytes + size > limits.max_queued_bytes ||
             queue.size() + 1 > limits.max_queued_messages) {
        if (limits.on_overflow == overflow_policy::close || queue.empty()) {
          fits = false;
          break;
        }
        bytes -= queue.front()->payload.size();
        counters->queued_bytes -= queue.front()->payload.size();
        queue.pop_front();
        ++counters->dropped;
      }
      if (!fits) {
        closing = true;  // the drain closes the connection with 1008
        ++counters->slow_closes;
        discard_locked();
      } else {
        queue.push_back(message);
        bytes += size;
        counters->queued_bytes += size;
        ++counters->delivered;
      }
      if (wake_posted) return fits;
      wake_posted = true;
      queued = fits;
    }
    post_wake();
    return queued;
  }

  // The drain closes the connection once the queue is empty; nothing is queued after this.
  void finish_with(close_code code, std::string_view reason) {
    {
      std::lock_guard lock(mutex);
      if (!open || closing || finish) return;
      finish.emplace(code, std::string(reason));
      if (wake_posted) return;
      wake_posted = true;
    }
    post_wake();
  }

  // Called once wake_posted was set, with the mutex released.
  void post_wake() {
    asio::post(executor, [self = self.lock()] {
      {
        std::lock_guard lock(self->mutex);
        self->wake_posted = false;
      }
      self->wake.cancel();
    });
  }

  // Called with the mutex held.
  void discard_locked() {
    counters->queued_bytes -= bytes;
    bytes = 0;
    queue.clear();
  }

  void shut() {
    std::lock_guard lock(mutex);
    open = false;
    discard_locked();
  }

  std::weak_ptr<topic_mailbox> self;
  asio::any_io_executor executor;
  asio::steady_timer wake;  // the connection's executor only
  bounds limits;
  std::shared_ptr<topic_hub::counters> counters;

  std::mutex mutex;
  std::deque<std::shared_ptr<const published>> queue;  // guarded by mutex
  std::size_t bytes = 0;                                // guarded by mutex
  bool open = true;                                     // guarded by mutex
  bool closing = false;                                 // guarded by mutex
  bool wake_posted = false;                             // guarded by mutex
  // Set by topic_subscriber::close(): the close the drain sends once the queue is empty.
  std::optional<std::pair<close_code, std::string>> finish;  // guarded by mutex
};

}  // namespace detail

// ---- names -----------------------------------------------------------------------------

std::optional<std::string> topic_name_refusal(std::string_view name,
                                              const topic_hub_options& options) {
  if (!name.empty() && name.size() <= options.max_topic_bytes) return std::nullopt;
  return "a topic of " + std::to_string(name.size()) + " bytes: a topic is 1 to " +
         std::to_string(options.max_topic_bytes) + " bytes";
}

// ---- the hub ---------------------------------------------------------------------------

topic_hub::topic_hub(topic_hub_options options)
    : options_(options), counters_(std::make_shared<counters>()) {
  if (options_.max_queued_bytes == 0 || options_.max_queued_messages == 0 ||
      options_.max_topics_per_subscriber == 0 || options_.max_topic_bytes == 0 ||
      options_.publish_rate == 0 || options_.publish_burst == 0)
    throw std::invalid_argument("topic_hub: every bound must be at least 1");
  if (options_.broker)
    options_.broker->start([this](std::string_view topic, std::string_view payload, bool binary) {
      ++received_;
      deliver(topic, payload, binary);
    });
}

// The broker stops first: no message from another instance arrives into a hub half gone.
topic_hub::~topic_hub() {
  if (options_.broker) options_.broker->stop();
}

void topic_hub::join(const mailbox_ptr& mailbox, const std::string& name, bool prefix) {
  std::lock_guard lock(mutex_);
  if (!prefix) {
    exact_[name].push_back(mailbox);
    return;
  }
  auto [it, added] = prefixes_.try_emplace(name);
  if (added) ++prefix_lengths_[it->first.size()];
  it->second.push_back(mailbox);
}

void topic_hub::leave(const mailbox_ptr& mailbox, const std::string& name, bool prefix) {
  std::lock_guard lock(mutex_);
  topic_table& table = prefix ? prefixes_ : exact_;
  auto it = table.find(name);
  if (it == table.end()) return;
  std::erase(it->second, mailbox);
  if (!it->second.empty()) return;
  if (prefix) {
    auto length = prefix_lengths_.find(it->first.size());
    if (--length->second == 0) prefix_lengths_.erase(length);
  }
  table.erase(it);
}

// Every mailbox a publish to `topic` reaches, once each: the name's own, then those of the
// prefixes it starts with, looked up only at the lengths some prefix has.
void topic_hub::collect(std::string_view topic, std::vector<mailbox_ptr>& out) const {
  std::size_t sources = 0;
  auto add = [&](const topic_table& table, std::string_view key) {
    if (auto it = table.find(key); it != table.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      ++sources;
    }
  };
  add(exact_, topic);
  for (const auto& [length, patterns] : prefix_lengths_) {
    if (length > topic.size()) break;
    add(prefixes_, topic.substr(0, length));
  }
  if (sources > 1) {  // a connection in two of them is reached once
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

// Local subscribers first, then the broker: a publish reaches this instance's subscribers
// even while the broker cannot reach the others, and at once rather than after a round trip.
std::size_t topic_hub::publish(std::string_view topic, std::string_view payload, bool binary) {
  if (payload.size() > options_.max_queued_bytes)
    throw std::length_error("a message of " + std::to_string(payload.size()) +
                            " bytes: a subscriber's queue holds at most " +
                            std::to_string(options_.max_queued_bytes));
  ++published_;
  std::size_t queued = deliver(topic, payload, binary);
  if (options_.broker) options_.broker->publish(topic, payload, binary);
  return queued;
}

std::size_t topic_hub::deliver(std::string_view topic, std::string_view payload, bool binary) {
  std::vector<mailbox_ptr> reached;
  {
    std::lock_guard lock(mutex_);
    collect(topic, reached);
  }
  if (reached.empty()) return 0;
  auto message = std::make_shared<const published>(published{std::string(payload), binary});
  std::size_t queued = 0;
  for (const mailbox_ptr& m : reached) queued += m->offer(message) ? 1 : 0;
  return queued;
}

std::size_t topic_hub::subscribers(std::string_view topic) const {
  std::vector<mailbox_ptr> reached;
  std::lock_guard lock(mutex_);
  collect(topic, reached);
  return reached.size();
}

topic_hub_stats topic_hub::stats() const {
  topic_hub_stats out;
  {
    std::lock_guard lock(mutex_);
    out.topics = exact_.size() + prefixes_.size();
    out.subscribers = members_;
  }
  out.queued_bytes = counters_->queued_bytes;
  out.published = published_;
  out.received = received_;
  out.delivered = counters_->delivered;
  out.dropped = counters_->dropped;
  out.slow_closes = counters_->slow_closes;
  return out;
}

// ---- a connection's membership ---------------------------------------------------------

topic_subscriber::topic_subscriber(topic_hub& hub, websocket& ws)
    : hub_(&hub), ws_(&ws),
      publish_tokens_(static_cast<double>(hub.options_.publish_burst)),
      tokens_at_(std::chrono::steady_clock::now()) {
  mailbox_ = std::make_shared<detail::topic_mailbox>(ws.channel().host().executor(),
                                                     hub.options_, hub.counters_);
  mailbox_->self = mailbox_;
}

topic_subscriber::~topic_subscriber() {
  for (const std::string& name : topics_) hub_->leave(mailbox_, name, false);
  for (const std::string& prefix : prefixes_) hub_->leave(mailbox_, prefix, true);
  if (!topics_.empty() || !prefixes_.empty()) {
    std::lock_guard lock(hub_->mutex_);
    --hub_->members_;
  }
  mailbox_->shut();
}

void topic_subscriber::subscribe(std::string_view name) {
  if (auto refusal = topic_name_refusal(name, hub_->options_))
    throw std::invalid_argument(*refusal);
  join(name, false);
}

void topic_subscriber::subscribe_prefix(std::string_view prefix) {
  if (prefix.size() > hub_->options_.max_topic_bytes)
    throw std::invalid_argument("a prefix of " + std::to_string(prefix.size()) +
                                " bytes: a topic is at most " +
                                std::to_string(hub_->options_.max_topic_bytes) + " bytes");
  join(prefix, true);
}

// Joins a topic or a prefix checked by the caller, once, within max_topics_per_subscriber.
void topic_subscriber::join(std::string_view name, bool prefix) {
  std::vector<std::string>& mine = prefix ? prefixes_ : topics_;
  if (std::find(mine.begin(), mine.end(), name) != mine.end()) return;
  std::size_t limit = hub_->options_.max_topics_per_subscriber;
  if (topics_.size() + prefixes_.size() >= limit)
    throw std::length_error("a connection is in at most " + std::to_string(limit) + " topics");
  bool first = topics_.empty() && prefixes_.empty();
  mine.emplace_back(name);
  hub_->join(mailbox_, mine.back(), prefix);
  if (first) {
    std::lock_guard lock(hub_->mutex_);
    ++hub_->members_;
  }
}

bool topic_subscriber::unsubscribe(std::string_view name) { return leave(name, false); }

bool topic_subscriber::unsubscribe_prefix(std::string_view prefix) { return leave(prefix, true); }

bool topic_subscriber::leave(std::string_view name, bool prefix) {
  std::vector<std::string>& mine = prefix ? prefixes_ : topics_;
  auto it = std::find(mine.begin(), mine.end(), name);
  if (it == mine.end()) return false;
  hub_->leave(mailbox_, *it, prefix);
  mine.erase(it);
  if (topics_.empty() && prefixes_.empty()) {
    std::lock_guard lock(hub_->mutex_);
    --hub_->members_;
  }
  return true;
}

std::size_t topic_subscriber::publish(std::string_view topic, std::string_view payload,
                                      bool binary) {
  if (!take_publish_token()) {
    const topic_hub_options& o = hub_->options_;
    throw publish_rate_exceeded("publishing faster than " + std::to_string(o.publish_rate) +
                                " messages a second (bursts of " + std::to_string(o.publish_burst) +
                                ")");
  }
  return hub_->publish(topic, payload, binary);
}

// A token bucket: refilled at publish_rate a second up to publish_burst, one token a publish.
bool topic_subscriber::take_publish_token() {
  const topic_hub_options& o = hub_->options_;
  auto now = std::chrono::steady_clock::now();
  std::chrono::duration<double> elapsed = now - tokens_at_;
  tokens_at_ = now;
  publish_tokens_ = std::min(static_cast<double>(o.publish_burst),
                             publish_tokens_ + elapsed.count() * static_cast<double>(o.publish_rate));
  if (publish_tokens_ < 1.0) return false;
  publish_tokens_ -= 1.0;
  return true;
}

bool topic_subscriber::send(std::string_view payload, bool binary) {
  return mailbox_->offer(std::make_shared<const published>(published{std::string(payload), binary}));
}

void topic_subscriber::close(close_code code, std::string_view reason) {
  mailbox_->finish_with(code, reason);
}

namespace {

// What the drain does next, taken from the mailbox under its lock: stop (the connection is
// gone), close (a slow consumer, or finish_with()), send a message, or (all empty) wait.
struct drain_step {
  bool stop = false;
  std::optional<std::pair<close_code, std::string>> close;
  std::shared_ptr<const published> next;
};

drain_step take_step(detail::topic_mailbox& box) {
  drain_step step;
  std::lock_guard lock(box.mutex);
  if (!box.open) {
    step.stop = true;
  } else if (box.closing) {
    step.close.emplace(close_code::policy_error, "slow consumer");
  } else if (!box.queue.empty()) {
    step.next = std::move(box.queue.front());
    box.queue.pop_front();
    box.bytes -= step.next->payload.size();
    box.counters->queued_bytes -= step.next->payload.size();
  } else if (box.finish) {
    step.close = box.finish;
  }
  return step;
}

// Sends what the mailbox holds, and waits for more, until the connection closes.
awaitable<void> drain(detail::topic_mailbox& box, websocket& ws) {
  for (;;) {
    drain_step step = take_step(box);
    if (step.stop) co_return;
    if (step.close) {
      try {
        co_await ws.close(step.close->first, step.close->second);
      } catch (const boost::system::system_error&) {
      }
      co_return;
    }
    if (step.next) {
      // A write fails only when the connection is gone or cut (its timeout, its own queue
      // bound): the reader sees the close and ends run().
      try {
        // Two statements, not a conditional of two awaitables (GCC 12 resumes a freed frame).
        if (step.next->binary)
          co_await ws.write_binary(step.next->payload);
        else
          co_await ws.write_text(step.next->payload);
      } catch (const boost::system::system_error&) {
        co_return;
      }
      continue;
    }
    box.wake.expires_at(std::chrono::steady_clock::time_point::max());
    boost::system::error_code ec;
    co_await box.wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

awaitable<void> read_until_closed(detail::topic_mailbox& box, websocket& ws,
                                  const std::function<void(const websocket_message&)>& on_message) {
  websocket_message message;
  while (co_await ws.read(message))
    if (on_message) on_message(message);
  box.shut();  // the drain, waiting or about to, stops
  box.wake.cancel();
}

}  // namespace

awaitable<void> topic_subscriber::run(std::function<void(const websocket_message&)> on_message) {
  using namespace asio::experimental::awaitable_operators;
  co_await (read_until_closed(*mailbox_, *ws_, on_message) && drain(*mailbox_, *ws_));
}

}  // namespace waypoint::app
