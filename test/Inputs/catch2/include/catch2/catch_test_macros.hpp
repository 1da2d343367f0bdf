// Stand-in for Catch2 v3's assertion macros (catch2/catch_test_macros.hpp):
// the Catch::AssertionHandler protocol its macros expand to, in simplified
// form. A fatal assertion (ResultDisposition::Normal) that fails throws
// from complete(), which the library defines out of line.
#ifndef CUDAGRAPH_TEST_CATCH2_TEST_MACROS_HPP
#define CUDAGRAPH_TEST_CATCH2_TEST_MACROS_HPP

#include <string>

namespace Catch {

struct ResultWas {
  enum OfType { Unknown = -1, Ok = 0, Info = 1, Warning = 2,
                ExplicitFailure = 0x11, ExpressionFailed = 0x12 };
};

struct ResultDisposition {
  enum Flags { Normal = 0x01, ContinueOnFailure = 0x02, FalseTest = 0x04,
               SuppressFail = 0x08 };
};

class AssertionHandler {
public:
  AssertionHandler(const char *macroName, const char *file, int line,
                   ResultDisposition::Flags resultDisposition);
  ~AssertionHandler();
  void handleExpr(bool value);
  void handleMessage(ResultWas::OfType resultType, const std::string &message);
  void complete();
};

} // namespace Catch

#define CATCH_INTERNAL_MSG_(macroName, messageType, resultDisposition, msg)   \
  do {                                                                         \
    Catch::AssertionHandler catchAssertionHandler(macroName, __FILE__,         \
                                                  __LINE__, resultDisposition);\
    catchAssertionHandler.handleMessage(messageType, msg);                     \
    catchAssertionHandler.complete();                                          \
  } while (false)

#define CATCH_INTERNAL_TEST_(macroName, resultDisposition, expr)               \
  do {                                                                         \
    Catch::AssertionHandler catchAssertionHandler(macroName, __FILE__,         \
                                                  __LINE__, resultDisposition);\
    catchAssertionHandler.handleExpr(static_cast<bool>(expr));                 \
    catchAssertionHandler.complete();                                          \
  } while (false)

#define FAIL(msg)                                                              \
  CATCH_INTERNAL_MSG_("FAIL", Catch::ResultWas::ExplicitFailure,               \
                      Catch::ResultDisposition::Normal, msg)
#define FAIL_CHECK(msg)                                                        \
  CATCH_INTERNAL_MSG_("FAIL_CHECK", Catch::ResultWas::ExplicitFailure,         \
                      Catch::ResultDisposition::ContinueOnFailure, msg)
#define WARN(msg)                                                              \
  CATCH_INTERNAL_MSG_("WARN", Catch::ResultWas::Warning,                       \
                      Catch::ResultDisposition::ContinueOnFailure, msg)
#define REQUIRE(expr)                                                          \
  CATCH_INTERNAL_TEST_("REQUIRE", Catch::ResultDisposition::Normal, expr)
#define CHECK(expr)                                                            \
  CATCH_INTERNAL_TEST_("CHECK", Catch::ResultDisposition::ContinueOnFailure,   \
                       expr)

#endif // CUDAGRAPH_TEST_CATCH2_TEST_MACROS_HPP
