#ifndef HERALD_CRABBITMQ_SHIM_H
#define HERALD_CRABBITMQ_SHIM_H

// Swift-facing view of rabbitmq-c (Debian librabbitmq-dev 0.11).
// Holds static inline wrappers for what Swift cannot call or import directly:
// variadic functions, method-id and flag macros built from casts and shifts.

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <amqp_ssl_socket.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <unistd.h>
#include <errno.h>

// ---- login (amqp_login_with_properties is variadic) ----

/// SASL PLAIN login with client properties.
static inline amqp_rpc_reply_t herald_amqp_login_plain(amqp_connection_state_t state,
                                                       const char *vhost,
                                                       int channel_max,
                                                       int frame_max,
                                                       int heartbeat,
                                                       const amqp_table_t *properties,
                                                       const char *user,
                                                       const char *password) {
  return amqp_login_with_properties(state, vhost, channel_max, frame_max, heartbeat,
                                    properties, AMQP_SASL_METHOD_PLAIN, user, password);
}

// ---- method ids ----

static const amqp_method_number_t HERALD_CONNECTION_CLOSE = AMQP_CONNECTION_CLOSE_METHOD;
static const amqp_method_number_t HERALD_CONNECTION_CLOSE_OK = AMQP_CONNECTION_CLOSE_OK_METHOD;
static const amqp_method_number_t HERALD_CONNECTION_BLOCKED = AMQP_CONNECTION_BLOCKED_METHOD;
static const amqp_method_number_t HERALD_CONNECTION_UNBLOCKED = AMQP_CONNECTION_UNBLOCKED_METHOD;
static const amqp_method_number_t HERALD_CHANNEL_OPEN = AMQP_CHANNEL_OPEN_METHOD;
static const amqp_method_number_t HERALD_CHANNEL_OPEN_OK = AMQP_CHANNEL_OPEN_OK_METHOD;
static const amqp_method_number_t HERALD_CHANNEL_CLOSE = AMQP_CHANNEL_CLOSE_METHOD;
static const amqp_method_number_t HERALD_CHANNEL_CLOSE_OK = AMQP_CHANNEL_CLOSE_OK_METHOD;
static const amqp_method_number_t HERALD_CHANNEL_FLOW = AMQP_CHANNEL_FLOW_METHOD;
static const amqp_method_number_t HERALD_EXCHANGE_DECLARE = AMQP_EXCHANGE_DECLARE_METHOD;
static const amqp_method_number_t HERALD_EXCHANGE_DECLARE_OK = AMQP_EXCHANGE_DECLARE_OK_METHOD;
static const amqp_method_number_t HERALD_EXCHANGE_DELETE = AMQP_EXCHANGE_DELETE_METHOD;
static const amqp_method_number_t HERALD_EXCHANGE_DELETE_OK = AMQP_EXCHANGE_DELETE_OK_METHOD;
static const amqp_method_number_t HERALD_QUEUE_DECLARE = AMQP_QUEUE_DECLARE_METHOD;
static const amqp_method_number_t HERALD_QUEUE_DECLARE_OK = AMQP_QUEUE_DECLARE_OK_METHOD;
static const amqp_method_number_t HERALD_QUEUE_BIND = AMQP_QUEUE_BIND_METHOD;
static const amqp_method_number_t HERALD_QUEUE_BIND_OK = AMQP_QUEUE_BIND_OK_METHOD;
static const amqp_method_number_t HERALD_QUEUE_PURGE = AMQP_QUEUE_PURGE_METHOD;
static const amqp_method_number_t HERALD_QUEUE_PURGE_OK = AMQP_QUEUE_PURGE_OK_METHOD;
static const amqp_method_number_t HERALD_QUEUE_DELETE = AMQP_QUEUE_DELETE_METHOD;
static const amqp_method_number_t HERALD_QUEUE_DELETE_OK = AMQP_QUEUE_DELETE_OK_METHOD;
static const amqp_method_number_t HERALD_BASIC_QOS = AMQP_BASIC_QOS_METHOD;
static const amqp_method_number_t HERALD_BASIC_QOS_OK = AMQP_BASIC_QOS_OK_METHOD;
static const amqp_method_number_t HERALD_BASIC_CONSUME = AMQP_BASIC_CONSUME_METHOD;
static const amqp_method_number_t HERALD_BASIC_CONSUME_OK = AMQP_BASIC_CONSUME_OK_METHOD;
static const amqp_method_number_t HERALD_BASIC_CANCEL = AMQP_BASIC_CANCEL_METHOD;
static const amqp_method_number_t HERALD_BASIC_CANCEL_OK = AMQP_BASIC_CANCEL_OK_METHOD;
static const amqp_method_number_t HERALD_BASIC_RETURN = AMQP_BASIC_RETURN_METHOD;
static const amqp_method_number_t HERALD_BASIC_DELIVER = AMQP_BASIC_DELIVER_METHOD;
static const amqp_method_number_t HERALD_BASIC_GET = AMQP_BASIC_GET_METHOD;
static const amqp_method_number_t HERALD_BASIC_GET_OK = AMQP_BASIC_GET_OK_METHOD;
static const amqp_method_number_t HERALD_BASIC_GET_EMPTY = AMQP_BASIC_GET_EMPTY_METHOD;
static const amqp_method_number_t HERALD_BASIC_ACK = AMQP_BASIC_ACK_METHOD;
static const amqp_method_number_t HERALD_BASIC_NACK = AMQP_BASIC_NACK_METHOD;
static const amqp_method_number_t HERALD_BASIC_REJECT = AMQP_BASIC_REJECT_METHOD;
static const amqp_method_number_t HERALD_CONFIRM_SELECT = AMQP_CONFIRM_SELECT_METHOD;
static const amqp_method_number_t HERALD_CONFIRM_SELECT_OK = AMQP_CONFIRM_SELECT_OK_METHOD;

// ---- frame types ----

static const uint8_t HERALD_FRAME_METHOD = AMQP_FRAME_METHOD;
static const uint8_t HERALD_FRAME_HEADER = AMQP_FRAME_HEADER;
static const uint8_t HERALD_FRAME_BODY = AMQP_FRAME_BODY;
static const uint8_t HERALD_FRAME_HEARTBEAT = AMQP_FRAME_HEARTBEAT;

// ---- basic properties flags ----

static const amqp_flags_t HERALD_BASIC_CONTENT_TYPE_FLAG = AMQP_BASIC_CONTENT_TYPE_FLAG;
static const amqp_flags_t HERALD_BASIC_CONTENT_ENCODING_FLAG = AMQP_BASIC_CONTENT_ENCODING_FLAG;
static const amqp_flags_t HERALD_BASIC_HEADERS_FLAG = AMQP_BASIC_HEADERS_FLAG;
static const amqp_flags_t HERALD_BASIC_DELIVERY_MODE_FLAG = AMQP_BASIC_DELIVERY_MODE_FLAG;
static const amqp_flags_t HERALD_BASIC_PRIORITY_FLAG = AMQP_BASIC_PRIORITY_FLAG;
static const amqp_flags_t HERALD_BASIC_CORRELATION_ID_FLAG = AMQP_BASIC_CORRELATION_ID_FLAG;
static const amqp_flags_t HERALD_BASIC_REPLY_TO_FLAG = AMQP_BASIC_REPLY_TO_FLAG;
static const amqp_flags_t HERALD_BASIC_EXPIRATION_FLAG = AMQP_BASIC_EXPIRATION_FLAG;
static const amqp_flags_t HERALD_BASIC_MESSAGE_ID_FLAG = AMQP_BASIC_MESSAGE_ID_FLAG;
static const amqp_flags_t HERALD_BASIC_TIMESTAMP_FLAG = AMQP_BASIC_TIMESTAMP_FLAG;
static const amqp_flags_t HERALD_BASIC_TYPE_FLAG = AMQP_BASIC_TYPE_FLAG;
static const amqp_flags_t HERALD_BASIC_USER_ID_FLAG = AMQP_BASIC_USER_ID_FLAG;
static const amqp_flags_t HERALD_BASIC_APP_ID_FLAG = AMQP_BASIC_APP_ID_FLAG;

// ---- small helpers ----

/// The empty byte string (amqp_empty_bytes is an extern const Swift sees as a var).
static inline amqp_bytes_t herald_empty_bytes(void) {
  amqp_bytes_t b;
  b.len = 0;
  b.bytes = NULL;
  return b;
}

/// Creates a non-blocking, close-on-exec eventfd used to wake the connection thread.
static inline int herald_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// Signals the eventfd (adds 1). Safe to call from any thread.
static inline void herald_eventfd_signal(int fd) {
  uint64_t one = 1;
  ssize_t r;
  do { r = write(fd, &one, sizeof(one)); } while (r < 0 && errno == EINTR);
}

/// Drains the eventfd counter.
static inline void herald_eventfd_drain(int fd) {
  uint64_t value;
  ssize_t r;
  do { r = read(fd, &value, sizeof(value)); } while (r < 0 && errno == EINTR);
}

/// poll() on the socket and the wake-up fd. Returns a bit set: 1 = socket readable
/// (or in error), 2 = wake-up fd readable; 0 on timeout; -1 on error.
static inline int herald_poll2(int sockfd, int wakefd, int timeout_ms) {
  struct pollfd fds[2];
  int n = 0;
  int sockIndex = -1, wakeIndex = -1;
  if (sockfd >= 0) { fds[n].fd = sockfd; fds[n].events = POLLIN; fds[n].revents = 0; sockIndex = n++; }
  if (wakefd >= 0) { fds[n].fd = wakefd; fds[n].events = POLLIN; fds[n].revents = 0; wakeIndex = n++; }
  int r;
  do { r = poll(fds, (nfds_t)n, timeout_ms); } while (r < 0 && errno == EINTR);
  if (r <= 0) return r;
  int out = 0;
  if (sockIndex >= 0 && fds[sockIndex].revents != 0) out |= 1;
  if (wakeIndex >= 0 && fds[wakeIndex].revents != 0) out |= 2;
  return out;
}

#endif
