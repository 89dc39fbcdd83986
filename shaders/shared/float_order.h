// Order-preserving mapping between float32 bit patterns and uint32 keys: a < b as floats
// (with -0 < +0, and NaNs beyond the infinities) iff key(a) < key(b) as unsigned integers.
// Min/max over keys are exact and order-independent, so every backend gets the same bits.
#ifndef VKC_SHARED_FLOAT_ORDER_H
#define VKC_SHARED_FLOAT_ORDER_H
#include "common.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kSignBit, 0x80000000u);
// Key of +inf and of -inf: the identities of min and max over finite keys.
VKC_CONSTANT(uint, kKeyPosInf, 0xFF800000u);
VKC_CONSTANT(uint, kKeyNegInf, 0x007FFFFFu);

#ifdef __cplusplus
inline uint floatKeyFromBits(uint bits) { return bits ^ ((bits & kSignBit) != 0u ? 0xFFFFFFFFu : kSignBit); }
inline uint floatBitsFromKey(uint key) { return key ^ ((key & kSignBit) != 0u ? kSignBit : 0xFFFFFFFFu); }
#else
uint floatKeyFromBits(uint bits) { return bits ^ ((bits & kSignBit) != 0u ? 0xFFFFFFFFu : kSignBit); }
uint floatBitsFromKey(uint key) { return key ^ ((key & kSignBit) != 0u ? kSignBit : 0xFFFFFFFFu); }
uvec4 floatKey(vec4 v) {
  uvec4 b = floatBitsToUint(v);
  return uvec4(floatKeyFromBits(b.x), floatKeyFromBits(b.y), floatKeyFromBits(b.z), floatKeyFromBits(b.w));
}
vec4 floatFromKey(uvec4 k) {
  return uintBitsToFloat(
      uvec4(floatBitsFromKey(k.x), floatBitsFromKey(k.y), floatBitsFromKey(k.z), floatBitsFromKey(k.w)));
}
#endif

VKC_NAMESPACE_END
#endif  // VKC_SHARED_FLOAT_ORDER_H
