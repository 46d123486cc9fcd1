//===- c_api.h - XLA's FFI C types (xla/ffi/api/c_api.h) -------------------===//
//
// The C-level types of XLA's typed FFI, with XLA's names and enum values, as
// far as Axle uses them: a handler is `XLA_FFI_Error* fn(XLA_FFI_CallFrame*)`;
// the call frame carries the argument and result buffers and the attributes
// (sorted by name); an error is an opaque object made through the API table.
//
// Differences from XLA (documented, not hidden):
//   * XLA_FFI_Api holds only the error and handler-registration entries;
//     there is no execution context (streams, user data, state, scratch
//     memory, thread pools, futures): `ctx` is always null.
//   * STRUCT_SIZE constants are plain sizeof; Axle checks them on the frame.
//   * Only the execute stage runs (XLA_FFI_ExecutionStage_EXECUTE).
//
// The C++ API on top is ffi_api.h; the runtime side is ffi_api.cc.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_FFI_C_API_H_
#define AXLE_RUNTIME_FFI_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XLA_FFI_API_MAJOR 0
#define XLA_FFI_API_MINOR 1

typedef enum {
  XLA_FFI_Error_Code_OK = 0,
  XLA_FFI_Error_Code_CANCELLED = 1,
  XLA_FFI_Error_Code_UNKNOWN = 2,
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,
  XLA_FFI_Error_Code_NOT_FOUND = 5,
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,
  XLA_FFI_Error_Code_ABORTED = 10,
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,
  XLA_FFI_Error_Code_INTERNAL = 13,
  XLA_FFI_Error_Code_UNAVAILABLE = 14,
  XLA_FFI_Error_Code_DATA_LOSS = 15,
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16,
} XLA_FFI_Error_Code;

// The values are XLA's PrimitiveType numbers (axle/core/primitive_type.h).
typedef enum {
  XLA_FFI_DataType_INVALID = 0,
  XLA_FFI_DataType_PRED = 1,
  XLA_FFI_DataType_S1 = 30,
  XLA_FFI_DataType_S2 = 26,
  XLA_FFI_DataType_S4 = 21,
  XLA_FFI_DataType_S8 = 2,
  XLA_FFI_DataType_S16 = 3,
  XLA_FFI_DataType_S32 = 4,
  XLA_FFI_DataType_S64 = 5,
  XLA_FFI_DataType_U1 = 31,
  XLA_FFI_DataType_U2 = 27,
  XLA_FFI_DataType_U4 = 22,
  XLA_FFI_DataType_U8 = 6,
  XLA_FFI_DataType_U16 = 7,
  XLA_FFI_DataType_U32 = 8,
  XLA_FFI_DataType_U64 = 9,
  XLA_FFI_DataType_F16 = 10,
  XLA_FFI_DataType_F32 = 11,
  XLA_FFI_DataType_F64 = 12,
  XLA_FFI_DataType_BF16 = 16,
  XLA_FFI_DataType_C64 = 15,
  XLA_FFI_DataType_C128 = 18,
  XLA_FFI_DataType_TOKEN = 17,
  XLA_FFI_DataType_F8E5M2 = 19,
  XLA_FFI_DataType_F8E3M4 = 29,
  XLA_FFI_DataType_F8E4M3 = 28,
  XLA_FFI_DataType_F8E4M3FN = 20,
  XLA_FFI_DataType_F8E4M3B11FNUZ = 23,
  XLA_FFI_DataType_F8E5M2FNUZ = 24,
  XLA_FFI_DataType_F8E4M3FNUZ = 25,
  XLA_FFI_DataType_F4E2M1FN = 32,
  XLA_FFI_DataType_F8E8M0FNU = 33,
} XLA_FFI_DataType;

typedef enum { XLA_FFI_ArgType_BUFFER = 1 } XLA_FFI_ArgType;
typedef enum { XLA_FFI_RetType_BUFFER = 1 } XLA_FFI_RetType;

typedef enum {
  XLA_FFI_AttrType_ARRAY = 1,
  XLA_FFI_AttrType_DICTIONARY = 2,
  XLA_FFI_AttrType_SCALAR = 3,
  XLA_FFI_AttrType_STRING = 4,
} XLA_FFI_AttrType;

typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3,
} XLA_FFI_ExecutionStage;

typedef uint32_t XLA_FFI_Handler_Traits;
enum { XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0 };

typedef struct XLA_FFI_Error XLA_FFI_Error;                        // opaque
typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext;  // opaque: the platform stream
typedef struct XLA_FFI_Api XLA_FFI_Api;

typedef struct XLA_FFI_Extension_Base {
  size_t struct_size;
  int type;
  struct XLA_FFI_Extension_Base* next;
} XLA_FFI_Extension_Base;

typedef struct {
  const char* ptr;
  size_t len;
} XLA_FFI_ByteSpan;

typedef struct {
  XLA_FFI_DataType dtype;
  void* value;
} XLA_FFI_Scalar;

typedef struct {
  XLA_FFI_DataType dtype;
  size_t size;
  void* data;
} XLA_FFI_Array;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims;
} XLA_FFI_Buffer;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_ArgType* types;
  void** args;
} XLA_FFI_Args;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_RetType* types;
  void** rets;
} XLA_FFI_Rets;

// Attributes sorted by name. A DICTIONARY attribute points at another
// XLA_FFI_Attrs, a SCALAR at an XLA_FFI_Scalar, an ARRAY at an XLA_FFI_Array,
// a STRING at an XLA_FFI_ByteSpan.
typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_AttrType* types;
  XLA_FFI_ByteSpan** names;
  void** attrs;
} XLA_FFI_Attrs;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
} XLA_FFI_CallFrame;

typedef XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame* call_frame);

typedef struct {
  XLA_FFI_Handler* instantiate;
  XLA_FFI_Handler* prepare;
  XLA_FFI_Handler* initialize;
  XLA_FFI_Handler* execute;
} XLA_FFI_Handler_Bundle;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const char* message;
  XLA_FFI_Error_Code errc;
} XLA_FFI_Error_Create_Args;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
  const char* message;  // out; owned by the error
} XLA_FFI_Error_GetMessage_Args;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
} XLA_FFI_Error_Destroy_Args;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_ByteSpan platform;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
} XLA_FFI_Handler_Register_Args;

typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int major_version;
  int minor_version;
} XLA_FFI_Api_Version;

typedef XLA_FFI_Error* XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args* args);
typedef void XLA_FFI_Error_GetMessage(XLA_FFI_Error_GetMessage_Args* args);
typedef void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Handler_Register(XLA_FFI_Handler_Register_Args* args);

// The call's platform stream (a CUstream on CUDA); an error where the call
// has none (the Host platform).
typedef struct {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  void* stream;  // out
} XLA_FFI_Stream_Get_Args;

typedef XLA_FFI_Error* XLA_FFI_Stream_Get(XLA_FFI_Stream_Get_Args* args);

struct XLA_FFI_Api {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Api_Version api_version;
  void* internal_api;  // unused
  XLA_FFI_Error_Create* XLA_FFI_Error_Create;
  XLA_FFI_Error_GetMessage* XLA_FFI_Error_GetMessage;
  XLA_FFI_Error_Destroy* XLA_FFI_Error_Destroy;
  XLA_FFI_Handler_Register* XLA_FFI_Handler_Register;
  XLA_FFI_Stream_Get* XLA_FFI_Stream_Get;
};

#define XLA_FFI_Buffer_STRUCT_SIZE sizeof(XLA_FFI_Buffer)
#define XLA_FFI_Args_STRUCT_SIZE sizeof(XLA_FFI_Args)
#define XLA_FFI_Rets_STRUCT_SIZE sizeof(XLA_FFI_Rets)
#define XLA_FFI_Attrs_STRUCT_SIZE sizeof(XLA_FFI_Attrs)
#define XLA_FFI_CallFrame_STRUCT_SIZE sizeof(XLA_FFI_CallFrame)
#define XLA_FFI_Error_Create_Args_STRUCT_SIZE sizeof(XLA_FFI_Error_Create_Args)
#define XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE sizeof(XLA_FFI_Error_GetMessage_Args)
#define XLA_FFI_Error_Destroy_Args_STRUCT_SIZE sizeof(XLA_FFI_Error_Destroy_Args)
#define XLA_FFI_Handler_Register_Args_STRUCT_SIZE sizeof(XLA_FFI_Handler_Register_Args)
#define XLA_FFI_Stream_Get_Args_STRUCT_SIZE sizeof(XLA_FFI_Stream_Get_Args)
#define XLA_FFI_Api_STRUCT_SIZE sizeof(XLA_FFI_Api)

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // AXLE_RUNTIME_FFI_C_API_H_
