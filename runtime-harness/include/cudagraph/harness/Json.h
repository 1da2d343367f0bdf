//===--- Json.h - just enough JSON for report lines -------------*- C++ -*-===//
//
// Reports are JSON lines. The injection library must not pull a JSON library
// into every process it is loaded into, so this is a small writer that builds
// one object into a string, and a small reader for recorded event streams.
//
//===----------------------------------------------------------------------===//

#ifndef CUDAGRAPH_HARNESS_JSON_H
#define CUDAGRAPH_HARNESS_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudagraph {
namespace harness {

/// Appends S to Out as a quoted JSON string.
void appendJsonString(std::string &Out, std::string_view S);

/// Builds one JSON object; fields appear in the order they are added.
class JsonObject {
public:
  JsonObject &add(std::string_view Key, std::string_view Value);
  JsonObject &add(std::string_view Key, const char *Value);
  JsonObject &add(std::string_view Key, const std::string &Value) {
    return add(Key, std::string_view(Value));
  }
  JsonObject &add(std::string_view Key, int64_t Value);
  JsonObject &add(std::string_view Key, uint64_t Value);
  JsonObject &add(std::string_view Key, int Value) {
    return add(Key, static_cast<int64_t>(Value));
  }
  JsonObject &add(std::string_view Key, unsigned Value) {
    return add(Key, static_cast<uint64_t>(Value));
  }
  JsonObject &add(std::string_view Key, double Value);
  JsonObject &addBool(std::string_view Key, bool Value);
  JsonObject &addNull(std::string_view Key);
  /// Adds an already serialized JSON value (object, array).
  JsonObject &addRaw(std::string_view Key, std::string_view Json);
  JsonObject &add(std::string_view Key, const std::vector<uint64_t> &Values);

  /// The object's text, without a trailing newline.
  std::string str() const { return Text + "}"; }

private:
  void key(std::string_view Key);
  std::string Text = "{";
};

/// A parsed JSON value; enough for recorded event streams and tests.
class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return K; }
  bool isNull() const { return K == Kind::Null; }
  bool asBool() const { return Bool; }
  double asNumber() const { return Number; }
  /// The number as an integer, saturated at the int64 range (NaN is 0):
  /// converting a double outside it would be undefined.
  int64_t asInt() const;
  const std::string &asString() const { return String; }
  const std::vector<JsonValue> &asArray() const { return Array; }

  /// The member named Key, or null if this is no object or has no such key.
  const JsonValue *get(std::string_view Key) const;
  std::string getString(std::string_view Key,
                        std::string_view Default = "") const;
  int64_t getInt(std::string_view Key, int64_t Default = 0) const;
  /// Reads an integer written as a number or as a "0x..." string.
  uint64_t getHandle(std::string_view Key) const;
  bool getBool(std::string_view Key, bool Default = false) const;

  /// Parses one JSON document; on failure returns false and sets Error.
  static bool parse(std::string_view Text, JsonValue &Out, std::string &Error);

private:
  friend class JsonParser;
  Kind K = Kind::Null;
  bool Bool = false;
  double Number = 0;
  std::string String;
  std::vector<JsonValue> Array;
  std::vector<std::pair<std::string, JsonValue>> Members;
};

/// "0x7f00..." for handles, so JSON readers never lose precision.
std::string hexString(uint64_t Value);

} // namespace harness
} // namespace cudagraph

#endif // CUDAGRAPH_HARNESS_JSON_H
