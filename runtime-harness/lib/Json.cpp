//===--- Json.cpp - just enough JSON for report lines ---------------------===//

#include "cudagraph/harness/Json.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace cudagraph {
namespace harness {

void appendJsonString(std::string &Out, std::string_view S) {
  Out += '"';
  for (unsigned char C : S) {
    switch (C) {
    case '"':
      Out += "\\\"";
      break;
    case '\\':
      Out += "\\\\";
      break;
    case '\n':
      Out += "\\n";
      break;
    case '\r':
      Out += "\\r";
      break;
    case '\t':
      Out += "\\t";
      break;
    default:
      if (C < 0x20) {
        char Buf[8];
        std::snprintf(Buf, sizeof(Buf), "\\u%04x", C);
        Out += Buf;
      } else {
        Out += static_cast<char>(C);
      }
    }
  }
  Out += '"';
}

std::string hexString(uint64_t Value) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%" PRIx64, Value);
  return Buf;
}

void JsonObject::key(std::string_view Key) {
  if (Text.size() > 1)
    Text += ',';
  appendJsonString(Text, Key);
  Text += ':';
}

JsonObject &JsonObject::add(std::string_view Key, std::string_view Value) {
  key(Key);
  appendJsonString(Text, Value);
  return *this;
}

JsonObject &JsonObject::add(std::string_view Key, const char *Value) {
  if (!Value)
    return addNull(Key);
  return add(Key, std::string_view(Value));
}

JsonObject &JsonObject::add(std::string_view Key, int64_t Value) {
  key(Key);
  Text += std::to_string(Value);
  return *this;
}

JsonObject &JsonObject::add(std::string_view Key, uint64_t Value) {
  key(Key);
  Text += std::to_string(Value);
  return *this;
}

JsonObject &JsonObject::add(std::string_view Key, double Value) {
  key(Key);
  if (!std::isfinite(Value)) {
    // JSON has no infinities; readers get a string they can still print.
    appendJsonString(Text, std::isnan(Value) ? "nan"
                           : Value > 0      ? "inf"
                                            : "-inf");
    return *this;
  }
  char Buf[40];
  std::snprintf(Buf, sizeof(Buf), "%.9g", Value);
  Text += Buf;
  return *this;
}

JsonObject &JsonObject::addBool(std::string_view Key, bool Value) {
  key(Key);
  Text += Value ? "true" : "false";
  return *this;
}

JsonObject &JsonObject::addNull(std::string_view Key) {
  key(Key);
  Text += "null";
  return *this;
}

JsonObject &JsonObject::addRaw(std::string_view Key, std::string_view Json) {
  key(Key);
  Text += Json;
  return *this;
}

JsonObject &JsonObject::add(std::string_view Key,
                            const std::vector<uint64_t> &Values) {
  key(Key);
  Text += '[';
  for (size_t I = 0; I < Values.size(); ++I) {
    if (I)
      Text += ',';
    Text += std::to_string(Values[I]);
  }
  Text += ']';
  return *this;
}

const JsonValue *JsonValue::get(std::string_view Key) const {
  if (K != Kind::Object)
    return nullptr;
  for (const auto &[Name, Value] : Members)
    if (Name == Key)
      return &Value;
  return nullptr;
}

std::string JsonValue::getString(std::string_view Key,
                                 std::string_view Default) const {
  const JsonValue *V = get(Key);
  if (!V || V->K != Kind::String)
    return std::string(Default);
  return V->String;
}

int64_t JsonValue::asInt() const {
  // 2^63 is exact in a double; every double below it converts.
  const double Limit = 9223372036854775808.0;
  if (Number != Number)
    return 0;
  if (Number >= Limit)
    return std::numeric_limits<int64_t>::max();
  if (Number < -Limit)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(Number);
}

int64_t JsonValue::getInt(std::string_view Key, int64_t Default) const {
  const JsonValue *V = get(Key);
  if (!V || V->K != Kind::Number)
    return Default;
  return V->asInt();
}

uint64_t JsonValue::getHandle(std::string_view Key) const {
  const JsonValue *V = get(Key);
  if (!V)
    return 0;
  if (V->K == Kind::Number) // A handle is never negative or fractional.
    return V->Number >= 0 && V->Number < 18446744073709551616.0
               ? static_cast<uint64_t>(V->Number)
               : 0;
  if (V->K == Kind::String)
    return std::strtoull(V->String.c_str(), nullptr, 0);
  return 0;
}

bool JsonValue::getBool(std::string_view Key, bool Default) const {
  const JsonValue *V = get(Key);
  if (!V || V->K != Kind::Bool)
    return Default;
  return V->Bool;
}

class JsonParser {
public:
  explicit JsonParser(std::string_view Text) : Text(Text) {}

  bool parseDocument(JsonValue &Out, std::string &Error) {
    if (!parseValue(Out, 0)) {
      Error = Message + " at offset " + std::to_string(Pos);
      return false;
    }
    skipSpace();
    if (Pos != Text.size()) {
      Error = "trailing characters at offset " + std::to_string(Pos);
      return false;
    }
    return true;
  }

private:
  bool fail(const char *What) {
    Message = What;
    return false;
  }

  void skipSpace() {
    while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                                 Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }

  bool literal(std::string_view Word) {
    if (Text.substr(Pos, Word.size()) != Word)
      return false;
    Pos += Word.size();
    return true;
  }

  bool parseValue(JsonValue &Out, unsigned Depth) {
    if (Depth > 64)
      return fail("nesting too deep");
    skipSpace();
    if (Pos >= Text.size())
      return fail("unexpected end of input");
    char C = Text[Pos];
    if (C == '{')
      return parseObject(Out, Depth);
    if (C == '[')
      return parseArray(Out, Depth);
    if (C == '"') {
      Out.K = JsonValue::Kind::String;
      return parseString(Out.String);
    }
    if (literal("true")) {
      Out.K = JsonValue::Kind::Bool;
      Out.Bool = true;
      return true;
    }
    if (literal("false")) {
      Out.K = JsonValue::Kind::Bool;
      Out.Bool = false;
      return true;
    }
    if (literal("null")) {
      Out.K = JsonValue::Kind::Null;
      return true;
    }
    return parseNumber(Out);
  }

  bool parseNumber(JsonValue &Out) {
    size_t Start = Pos;
    while (Pos < Text.size() &&
           std::string_view("+-0123456789.eE").find(Text[Pos]) !=
               std::string_view::npos)
      ++Pos;
    if (Start == Pos)
      return fail("unexpected character");
    std::string Number(Text.substr(Start, Pos - Start));
    char *End = nullptr;
    Out.Number = std::strtod(Number.c_str(), &End);
    if (End != Number.c_str() + Number.size())
      return fail("malformed number");
    Out.K = JsonValue::Kind::Number;
    return true;
  }

  static void appendUtf8(std::string &Out, unsigned Code) {
    if (Code < 0x80) {
      Out += static_cast<char>(Code);
    } else if (Code < 0x800) {
      Out += static_cast<char>(0xC0 | (Code >> 6));
      Out += static_cast<char>(0x80 | (Code & 0x3F));
    } else {
      Out += static_cast<char>(0xE0 | (Code >> 12));
      Out += static_cast<char>(0x80 | ((Code >> 6) & 0x3F));
      Out += static_cast<char>(0x80 | (Code & 0x3F));
    }
  }

  bool parseString(std::string &Out) {
    ++Pos; // Opening quote.
    while (Pos < Text.size()) {
      char C = Text[Pos++];
      if (C == '"')
        return true;
      if (C != '\\') {
        Out += C;
        continue;
      }
      if (Pos >= Text.size())
        break;
      char E = Text[Pos++];
      switch (E) {
      case 'n':
        Out += '\n';
        break;
      case 't':
        Out += '\t';
        break;
      case 'r':
        Out += '\r';
        break;
      case 'b':
        Out += '\b';
        break;
      case 'f':
        Out += '\f';
        break;
      case 'u': {
        if (Pos + 4 > Text.size())
          return fail("short \\u escape");
        std::string Hex(Text.substr(Pos, 4));
        Pos += 4;
        appendUtf8(Out, static_cast<unsigned>(std::strtoul(Hex.c_str(),
                                                           nullptr, 16)));
        break;
      }
      default:
        Out += E;
      }
    }
    return fail("unterminated string");
  }

  bool parseArray(JsonValue &Out, unsigned Depth) {
    Out.K = JsonValue::Kind::Array;
    ++Pos;
    skipSpace();
    if (Pos < Text.size() && Text[Pos] == ']') {
      ++Pos;
      return true;
    }
    while (true) {
      Out.Array.emplace_back();
      if (!parseValue(Out.Array.back(), Depth + 1))
        return false;
      skipSpace();
      if (Pos < Text.size() && Text[Pos] == ',') {
        ++Pos;
        continue;
      }
      if (Pos < Text.size() && Text[Pos] == ']') {
        ++Pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool parseObject(JsonValue &Out, unsigned Depth) {
    Out.K = JsonValue::Kind::Object;
    ++Pos;
    skipSpace();
    if (Pos < Text.size() && Text[Pos] == '}') {
      ++Pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (Pos >= Text.size() || Text[Pos] != '"')
        return fail("expected a member name");
      std::string Name;
      if (!parseString(Name))
        return false;
      skipSpace();
      if (Pos >= Text.size() || Text[Pos] != ':')
        return fail("expected ':'");
      ++Pos;
      JsonValue Value;
      if (!parseValue(Value, Depth + 1))
        return false;
      Out.Members.emplace_back(std::move(Name), std::move(Value));
      skipSpace();
      if (Pos < Text.size() && Text[Pos] == ',') {
        ++Pos;
        continue;
      }
      if (Pos < Text.size() && Text[Pos] == '}') {
        ++Pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string_view Text;
  size_t Pos = 0;
  std::string Message;
};

bool JsonValue::parse(std::string_view Text, JsonValue &Out,
                      std::string &Error) {
  Out = JsonValue();
  JsonParser Parser(Text);
  return Parser.parseDocument(Out, Error);
}

} // namespace harness
} // namespace cudagraph
