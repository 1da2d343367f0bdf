// Stand-in for c10/util/ArrayRef.h: a non-owning view over contiguous values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace c10 {

template <typename T>
class ArrayRef final {
 public:
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = size_t;
  using value_type = T;

  constexpr ArrayRef() : Data(nullptr), Length(0) {}
  /* implicit */ constexpr ArrayRef(const T& OneElt) : Data(&OneElt), Length(1) {}
  constexpr ArrayRef(const T* data, size_t length) : Data(data), Length(length) {}
  template <typename A>
  /* implicit */ ArrayRef(const std::vector<T, A>& Vec) : Data(Vec.data()), Length(Vec.size()) {}
  /* implicit */ constexpr ArrayRef(const std::initializer_list<T>& Vec)
      : Data(Vec.begin() == Vec.end() ? nullptr : Vec.begin()), Length(Vec.size()) {}

  constexpr iterator begin() const { return Data; }
  constexpr iterator end() const { return Data + Length; }
  constexpr const T* data() const { return Data; }
  constexpr size_t size() const { return Length; }
  constexpr bool empty() const { return Length == 0; }
  constexpr const T& operator[](size_t Index) const { return Data[Index]; }
  const T& front() const { return Data[0]; }
  const T& back() const { return Data[Length - 1]; }
  std::vector<T> vec() const { return std::vector<T>(Data, Data + Length); }

 private:
  const T* Data;
  size_type Length;
};

using IntArrayRef = ArrayRef<int64_t>;

} // namespace c10
