//===- npy_test.cc - .npy reading and writing -----------------------------===//
//
// The byte strings below were written by NumPy 1.24 (np.save, or
// numpy.lib.format.write_array for versions 2.0 and 3.0); each is preceded by
// the expression that made it. They are checked in so that the test is
// hermetic.
//
//===----------------------------------------------------------------------===//
#include "axle/core/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "absl/strings/escaping.h"
#include "absl/strings/str_replace.h"
#include "axle/core/literal_comparison.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

// np.array([[1.5, -2, 3], [4, 5e-3, np.inf]], dtype=np.float32)
constexpr char kF32x2x3[] =
    "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028322c2033292c207d2020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a0000c03f000000c000004040000080400ad7a33b0000807f";
// np.float64(2.5)
constexpr char kF64Scalar[] =
    "934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028292c207d202020202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a0000000000000440";
// np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
constexpr char kI16Fortran[] =
    "934e554d5059010076007b276465736372273a20273c6932272c2027666f727472616e5f6f726465"
    "72273a20547275652c20277368617065273a2028322c2033292c207d202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a000003000100040002000500";
// np.array([True, False, True])
constexpr char kBool3[] =
    "934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028332c292c207d20202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a010001";
// np.array([1+2j, -3.5-0.25j], dtype=np.complex64)
constexpr char kC64[] =
    "934e554d5059010076007b276465736372273a20273c6338272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028322c292c207d20202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a0000803f00000040000060c0000080be";
// np.arange(3, dtype='>i4')
constexpr char kBigEndianI4[] =
    "934e554d5059010076007b276465736372273a20273e6934272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028332c292c207d20202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a000000000000000100000002";
// np.array([1.5-2j], dtype='>c16')
constexpr char kBigEndianC16[] =
    "934e554d5059010076007b276465736372273a20273e633136272c2027666f727472616e5f6f7264"
    "6572273a2046616c73652c20277368617065273a2028312c292c207d202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a3ff8000000000000c000000000000000";
// np.zeros((0, 2), dtype=np.uint8)
constexpr char kU8Empty[] =
    "934e554d5059010076007b276465736372273a20277c7531272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028302c2032292c207d2020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a";
// np.array([0x3f80, 0xc000], dtype=np.uint16).view('V2')  (bfloat16 1, -2)
constexpr char kVoid2[] =
    "934e554d5059010076007b276465736372273a20277c5632272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028322c292c207d20202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a803f00c0";
// np.array([1, -2, 65504], dtype=np.float16)
constexpr char kF16[] =
    "934e554d5059010076007b276465736372273a20273c6632272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028332c292c207d20202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a003c00c0ff7b";
// np.array([2**64 - 1, 7], dtype=np.uint64)
constexpr char kU64[] =
    "934e554d5059010076007b276465736372273a20273c7538272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028322c292c207d20202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200affffffffffffffff0700000000000000";
// np.array([-128, 127], dtype=np.int8)
constexpr char kI8[] =
    "934e554d5059010076007b276465736372273a20277c6931272c2027666f727472616e5f6f726465"
    "72273a2046616c73652c20277368617065273a2028322c292c207d20202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a807f";
// format.write_array(f, np.array([1, 2], dtype=np.int64), version=(2, 0))
constexpr char kV2Header[] =
    "934e554d50590200740000007b276465736372273a20273c6938272c2027666f727472616e5f6f72"
    "646572273a2046616c73652c20277368617065273a2028322c292c207d2020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a01000000000000000200000000000000";
// format.write_array(f, np.array([1, 2], dtype=np.uint16), version=(3, 0))
constexpr char kV3Header[] =
    "934e554d50590300740000007b276465736372273a20273c7532272c2027666f727472616e5f6f72"
    "646572273a2046616c73652c20277368617065273a2028322c292c207d2020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "202020202020200a01000200";

std::string Bytes(const char* hex) { return absl::HexStringToBytes(hex); }

Literal Decode(const char* hex, std::optional<PrimitiveType> expected = std::nullopt) {
  absl::StatusOr<Literal> l = DecodeNpy(Bytes(hex), expected);
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? std::move(l).value() : Literal();
}

std::string ErrorOf(const absl::StatusOr<Literal>& l) {
  EXPECT_FALSE(l.ok());
  return l.ok() ? "" : std::string(l.status().message());
}

TEST(NpyTest, ReadsNumpyFiles) {
  Literal f32 = Decode(kF32x2x3);
  EXPECT_TRUE(
      LiteralsEqual(LiteralUtil::CreateR2<float>({{1.5f, -2, 3}, {4, 5e-3f, INFINITY}}), f32).ok());
  Literal f64 = Decode(kF64Scalar);
  EXPECT_EQ(f64.shape().ToString(), "f64[]");
  EXPECT_EQ(f64.data<double>()[0], 2.5);
  EXPECT_EQ(Decode(kBool3), LiteralUtil::CreateR1<bool>({true, false, true}));
  EXPECT_EQ(Decode(kC64),
            LiteralUtil::CreateR1<complex64>({complex64(1, 2), complex64(-3.5f, -0.25f)}));
  EXPECT_EQ(Decode(kF16).data<half>()[2].bits(), 0x7BFF);
  EXPECT_EQ(Decode(kU64), LiteralUtil::CreateR1<uint64_t>({UINT64_MAX, 7}));
  EXPECT_EQ(Decode(kI8), LiteralUtil::CreateR1<int8_t>({-128, 127}));
  Literal empty = Decode(kU8Empty);
  EXPECT_EQ(empty.shape().ToString(false), "u8[0,2]");
  EXPECT_EQ(Decode(kV2Header), LiteralUtil::CreateR1<int64_t>({1, 2}));
  EXPECT_EQ(Decode(kV3Header), LiteralUtil::CreateR1<uint16_t>({1, 2}));
}

TEST(NpyTest, TransposesFortranOrder) {
  EXPECT_EQ(Decode(kI16Fortran), LiteralUtil::CreateR2<int16_t>({{0, 1, 2}, {3, 4, 5}}));
  // A rank-3 array: write row-major data, relabel it Fortran order, and check
  // that element (i, j, k) comes from position i + 2j + 6k.
  std::vector<int32_t> values(24);
  for (int i = 0; i < 24; ++i) values[i] = i;
  absl::StatusOr<std::string> bytes =
      EncodeNpy(LiteralUtil::CreateFromDimensions<int32_t>({2, 3, 4}, values));
  ASSERT_TRUE(bytes.ok());
  std::string fortran =
      absl::StrReplaceAll(*bytes, {{"'fortran_order': False", "'fortran_order': True "}});
  ASSERT_NE(fortran, *bytes);
  absl::StatusOr<Literal> l = DecodeNpy(fortran);
  ASSERT_TRUE(l.ok()) << l.status();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(l->Get<int32_t>({i, j, k}), i + 2 * j + 6 * k);
      }
    }
  }
}

TEST(NpyTest, SwapsBigEndianData) {
  EXPECT_EQ(Decode(kBigEndianI4), LiteralUtil::CreateR1<int32_t>({0, 1, 2}));
  EXPECT_EQ(Decode(kBigEndianC16), LiteralUtil::CreateR1<complex128>({complex128(1.5, -2)}));
}

TEST(NpyTest, UntypedDataNeedsTheElementType) {
  EXPECT_THAT(ErrorOf(DecodeNpy(Bytes(kVoid2))), HasSubstr("untyped bytes"));
  Literal bf16 = Decode(kVoid2, BF16);
  EXPECT_EQ(bf16, LiteralUtil::CreateR1<bfloat16>({bfloat16(1.0f), bfloat16(-2.0f)}));
  EXPECT_EQ(Decode(kVoid2, F16).data<half>()[0].bits(), 0x3F80);
  EXPECT_THAT(ErrorOf(DecodeNpy(Bytes(kVoid2), F32)),
              HasSubstr("2-byte elements but f32 elements take 4"));
}

TEST(NpyTest, ExpectedTypeMustMatch) {
  EXPECT_THAT(ErrorOf(DecodeNpy(Bytes(kF32x2x3), F16)),
              HasSubstr("it holds f32 ('<f4') but f16 was expected"));
  EXPECT_TRUE(DecodeNpy(Bytes(kF32x2x3), F32).ok());
}

TEST(NpyTest, WritesWhatNumpyWrites) {
  for (const char* hex : {kF32x2x3, kF64Scalar, kBool3, kC64, kU8Empty, kF16, kU64, kI8}) {
    absl::StatusOr<std::string> bytes = EncodeNpy(Decode(hex));
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(absl::BytesToHexString(*bytes), hex);
  }
}

TEST(NpyTest, MlDtypesNames) {
  EXPECT_EQ(NpyDescr(BF16), "bfloat16");
  EXPECT_EQ(NpyDescr(F8E4M3FN), "float8_e4m3fn");
  EXPECT_EQ(NpyDescr(S4), "int4");
  EXPECT_EQ(NpyDescr(PRED), "|b1");
  EXPECT_EQ(NpyDescr(TUPLE), std::nullopt);
  absl::StatusOr<std::string> bytes = EncodeNpy(LiteralUtil::CreateR1<bfloat16>({bfloat16(1.0f)}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_THAT(*bytes, HasSubstr("{'descr': 'bfloat16', 'fortran_order': False, 'shape': (1,), }"));
  EXPECT_EQ(bytes->size() % 64, 2u);  // 64-byte header + 2 data bytes
}

TEST(NpyTest, SubByteIntegersUseTheLowBits) {
  absl::StatusOr<std::string> bytes =
      EncodeNpy(LiteralUtil::CreateR1<int4>({int4(-1), int4(7), int4(-8)}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(absl::BytesToHexString(bytes->substr(bytes->size() - 3)), "0f0708");
  // ml_dtypes leaves the upper bits unspecified: 0xff and 0x0f are both -1.
  std::string data = *bytes;
  data[data.size() - 3] = static_cast<char>(0xff);
  data[data.size() - 2] = static_cast<char>(0xf7);
  absl::StatusOr<Literal> l = DecodeNpy(data);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(*l, LiteralUtil::CreateR1<int4>({int4(-1), int4(7), int4(-8)}));
}

Literal RandomLiteral(PrimitiveType type, std::vector<int64_t> dims, std::mt19937_64* rng) {
  Literal l(ShapeUtil::MakeShape(type, dims));
  auto* data = static_cast<uint8_t*>(l.untyped_data());
  for (int64_t i = 0; i < l.size_bytes(); ++i) data[i] = static_cast<uint8_t>((*rng)());
  if (type == PRED || primitive_util::IsIntegralType(type)) {
    for (int64_t i = 0; i < l.element_count(); ++i)
      l.SetIntegral(i, static_cast<int64_t>((*rng)()));
  }
  return l;
}

TEST(NpyTest, RoundTripsEveryArrayType) {
  std::mt19937_64 rng(1);
  for (int t = 1; t < 64; ++t) {
    PrimitiveType type = static_cast<PrimitiveType>(t);
    if (!primitive_util::IsArrayType(type)) continue;
    SCOPED_TRACE(primitive_util::LowercasePrimitiveTypeName(type));
    for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {0}, {5}, {2, 3, 4}}) {
      Literal l = RandomLiteral(type, dims, &rng);
      absl::StatusOr<std::string> bytes = EncodeNpy(l);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      EXPECT_EQ((bytes->size() - l.size_bytes()) % 64, 0u);
      absl::StatusOr<Literal> back = DecodeNpy(*bytes);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, l);
      EXPECT_EQ(back->shape(), l.shape());
    }
  }
}

TEST(NpyTest, RejectsNonArrays) {
  Literal tuple = LiteralUtil::MakeTuple({LiteralUtil::CreateR0<float>(1)});
  absl::StatusOr<std::string> bytes = EncodeNpy(tuple);
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(std::string(bytes.status().message()), HasSubstr("hold arrays"));
  EXPECT_FALSE(EncodeNpy(LiteralUtil::CreateToken()).ok());
}

TEST(NpyTest, Files) {
  std::string path = ::testing::TempDir() + "/axle_npy_test.npy";
  Literal l = LiteralUtil::CreateR2<double>({{1, 2}, {3, 4}});
  ASSERT_TRUE(WriteNpy(l, path).ok());
  absl::StatusOr<Literal> back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, l);
  absl::StatusOr<Literal> wrong = ReadNpy(path, S32);
  EXPECT_THAT(ErrorOf(wrong), HasSubstr(path + ": bad .npy data: it holds f64"));
  std::remove(path.c_str());
  absl::StatusOr<Literal> missing = ReadNpy(path);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ErrorOf(missing), HasSubstr("cannot open " + path));
  absl::Status unwritable = WriteNpy(l, "/nonexistent-dir/x.npy");
  EXPECT_THAT(std::string(unwritable.message()), HasSubstr("/nonexistent-dir/x.npy"));
}

TEST(NpyTest, HeaderErrors) {
  std::string good = Bytes(kF32x2x3);
  EXPECT_THAT(ErrorOf(DecodeNpy("hello world")), HasSubstr("magic"));
  std::string bad_version = good;
  bad_version[6] = 9;
  EXPECT_THAT(ErrorOf(DecodeNpy(bad_version)), HasSubstr("unsupported format version 9.0"));
  EXPECT_THAT(ErrorOf(DecodeNpy(good.substr(0, good.size() - 1))),
              HasSubstr("needs 24 data bytes but the file has 23"));
  EXPECT_THAT(ErrorOf(DecodeNpy(good.substr(0, 60))), HasSubstr("bytes follow"));
  std::string object = absl::StrReplaceAll(good, {{"'<f4'", "'|O8'"}});
  EXPECT_THAT(ErrorOf(DecodeNpy(object)), HasSubstr("unsupported dtype '|O8'"));
  std::string structured = absl::StrReplaceAll(good, {{"'<f4'", "[('a'"}});
  EXPECT_THAT(ErrorOf(DecodeNpy(structured)), HasSubstr("structured dtypes"));
  std::string extra_key = absl::StrReplaceAll(good, {{"'shape'", "'shapx'"}});
  EXPECT_THAT(ErrorOf(DecodeNpy(extra_key)), HasSubstr("unexpected key 'shapx'"));
  std::string negative = absl::StrReplaceAll(good, {{"(2, 3)", "(2,-3)"}});
  EXPECT_THAT(ErrorOf(DecodeNpy(negative)), HasSubstr("non-negative integer dimension"));
  std::string huge = absl::StrReplaceAll(good, {{"(2, 3)", "(99999999999999999999)"}});
  EXPECT_THAT(ErrorOf(DecodeNpy(huge)), HasSubstr("dimension too large"));
  std::string overflow = absl::StrReplaceAll(good, {{"(2, 3), }", "(4294967296, 4294967296), }"}});
  EXPECT_THAT(ErrorOf(DecodeNpy(overflow)), HasSubstr("too large"));
}

TEST(NpyFuzzTest, CorruptFilesNeverCrash) {
  std::vector<std::string> seeds = {Bytes(kF32x2x3), Bytes(kI16Fortran), Bytes(kBigEndianC16),
                                    Bytes(kV2Header), Bytes(kVoid2)};
  // Every truncation.
  for (const std::string& seed : seeds) {
    for (size_t n = 0; n < seed.size(); ++n) {
      EXPECT_FALSE(DecodeNpy(seed.substr(0, n)).ok()) << n;
    }
  }
  // Random byte changes, mostly in the header.
  std::mt19937 rng(3);
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string data = seeds[rng() % seeds.size()];
    int changes = 1 + rng() % 4;
    for (int c = 0; c < changes; ++c) {
      size_t at = rng() % std::min<size_t>(data.size(), 140);
      data[at] = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : " ,()'0123456789:{}"[rng() % 18]);
    }
    absl::StatusOr<Literal> l =
        DecodeNpy(data, rng() % 2 ? std::optional<PrimitiveType>(BF16) : std::nullopt);
    if (l.ok()) ++decoded;
  }
  EXPECT_GT(decoded, 0);  // some changes are harmless (padding, values)
  // Pure noise.
  for (int i = 0; i < 2000; ++i) {
    std::string data(rng() % 200, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    if (rng() % 2) data.replace(0, std::min<size_t>(6, data.size()), "\x93NUMPY");
    EXPECT_FALSE(DecodeNpy(data).ok());
  }
}

}  // namespace
}  // namespace axle
