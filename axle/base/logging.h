//===- logging.h - Internal invariants -------------------------------------===//
//
// CHECK is for Axle's own invariants only: anything user input can trigger
// must return an absl::Status instead. A failed CHECK prints the condition and
// an optional streamed message, then aborts.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_LOGGING_H_
#define AXLE_BASE_LOGGING_H_

#include <sstream>
#include <string>

namespace axle::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `CHECK(x) << "msg"` be an expression of type void.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace axle::internal

#define AXLE_CHECK(cond)                 \
  (cond) ? (void)0                       \
         : ::axle::internal::Voidify() & \
               ::axle::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

#ifndef CHECK
#define CHECK(cond) AXLE_CHECK(cond)
#define CHECK_EQ(a, b) AXLE_CHECK((a) == (b))
#define CHECK_NE(a, b) AXLE_CHECK((a) != (b))
#define CHECK_LT(a, b) AXLE_CHECK((a) < (b))
#define CHECK_LE(a, b) AXLE_CHECK((a) <= (b))
#define CHECK_GT(a, b) AXLE_CHECK((a) > (b))
#define CHECK_GE(a, b) AXLE_CHECK((a) >= (b))
#define LOG_FATAL(msg) ::axle::internal::CheckFailure(__FILE__, __LINE__, "fatal").stream() << msg
#endif

#ifndef NDEBUG
#define DCHECK(cond) AXLE_CHECK(cond)
#else
#define DCHECK(cond) \
  while (false) AXLE_CHECK(cond)
#endif

#endif  // AXLE_BASE_LOGGING_H_
