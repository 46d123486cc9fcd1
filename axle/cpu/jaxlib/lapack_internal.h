//===- lapack_internal.h - The LAPACK/BLAS routines jaxlib targets call ----===//
//
// Declarations of the reference (Fortran) LAPACK and BLAS entry points the
// jaxlib targets use, with 32-bit integers (the LP64 interface Debian's
// liblapack3 and libopenblas0 export), and one overload set per routine over
// float, double, std::complex<float> and std::complex<double> (`lapack::Potrf`
// calls spotrf_, dpotrf_, cpotrf_ or zpotrf_). Character arguments are passed
// with gfortran's hidden length arguments (1 each), as LAPACKE does.
//
// Private to axle_jaxlib (an _internal.h header: not installed); nothing
// outside axle/cpu/jaxlib/ includes it, so LAPACK's symbols do not leak into
// Axle's headers. Callers validate every argument first: a reference LAPACK
// built with the default XERBLA stops the process on an illegal one.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_JAXLIB_LAPACK_INTERNAL_H_
#define AXLE_CPU_JAXLIB_LAPACK_INTERNAL_H_

#include <complex>
#include <cstddef>

namespace axle::jaxlib::lapack {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using Len = size_t;  // gfortran's hidden CHARACTER length

// A LOGICAL FUNCTION for xGEES's SELECT (never called: jaxlib does not sort).
using SelectReal = int (*)(const void*, const void*);
using SelectComplex = int (*)(const void*);

// The element types by LAPACK's prefix: X(prefix, type) for all four, and
// REAL(prefix, type) and COMPLEX(prefix, type, its real part's type) where
// the real and the complex routines differ.
#define AXLE_LAPACK_ALL_TYPES(X) X(s, float) X(d, double) X(c, c64) X(z, c128)
#define AXLE_LAPACK_REAL_AND_COMPLEX(REAL, COMPLEX) \
  REAL(s, float) REAL(d, double) COMPLEX(c, c64, float) COMPLEX(z, c128, double)

extern "C" {
#define AXLE_LAPACK_TRSM(p, T)                                                                \
  void p##trsm_(const char* side, const char* uplo, const char* transa, const char* diag,     \
                const int* m, const int* n, const T* alpha, const T* a, const int* lda, T* b, \
                const int* ldb, Len, Len, Len, Len);
#define AXLE_LAPACK_POTRF(p, T) \
  void p##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info, Len);
#define AXLE_LAPACK_GETRF(p, T) \
  void p##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
#define AXLE_LAPACK_GEQRF(p, T)                                                     \
  void p##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, \
                 const int* lwork, int* info);
#define AXLE_LAPACK_ORGQR(name, T)                                                                 \
  void name(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work, \
            const int* lwork, int* info);
#define AXLE_LAPACK_GEHRD(p, T)                                                              \
  void p##gehrd_(const int* n, const int* ilo, const int* ihi, T* a, const int* lda, T* tau, \
                 T* work, const int* lwork, int* info);
#define AXLE_LAPACK_SYTRD(name, T, R)                                                          \
  void name(const char* uplo, const int* n, T* a, const int* lda, R* d, R* e, T* tau, T* work, \
            const int* lwork, int* info, Len);
#define AXLE_LAPACK_GTSV(p, T) \
  void p##gtsv_(const int* n, const int* nrhs, T* dl, T* d, T* du, T* b, const int* ldb, int* info);
#define AXLE_LAPACK_ORMQR(name, T)                                                         \
  void name(const char* side, const char* trans, const int* m, const int* n, const int* k, \
            const T* a, const int* lda, const T* tau, T* c, const int* ldc, T* work,       \
            const int* lwork, int* info, Len, Len);
AXLE_LAPACK_ALL_TYPES(AXLE_LAPACK_TRSM)
AXLE_LAPACK_ALL_TYPES(AXLE_LAPACK_POTRF)
AXLE_LAPACK_ALL_TYPES(AXLE_LAPACK_GETRF)
AXLE_LAPACK_ALL_TYPES(AXLE_LAPACK_GEQRF)
AXLE_LAPACK_ALL_TYPES(AXLE_LAPACK_GEHRD)
AXLE_LAPACK_ALL_TYPES(AXLE_LAPACK_GTSV)
AXLE_LAPACK_ORMQR(sormqr_, float)
AXLE_LAPACK_ORMQR(dormqr_, double)
AXLE_LAPACK_ORMQR(cunmqr_, c64)
AXLE_LAPACK_ORMQR(zunmqr_, c128)
void sgeqp3_(const int* m, const int* n, float* a, const int* lda, int* jpvt, float* tau,
             float* work, const int* lwork, int* info);
void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau,
             double* work, const int* lwork, int* info);
void cgeqp3_(const int* m, const int* n, c64* a, const int* lda, int* jpvt, c64* tau, c64* work,
             const int* lwork, float* rwork, int* info);
void zgeqp3_(const int* m, const int* n, c128* a, const int* lda, int* jpvt, c128* tau, c128* work,
             const int* lwork, double* rwork, int* info);
AXLE_LAPACK_ORGQR(sorgqr_, float)
AXLE_LAPACK_ORGQR(dorgqr_, double)
AXLE_LAPACK_ORGQR(cungqr_, c64)
AXLE_LAPACK_ORGQR(zungqr_, c128)
AXLE_LAPACK_SYTRD(ssytrd_, float, float)
AXLE_LAPACK_SYTRD(dsytrd_, double, double)
AXLE_LAPACK_SYTRD(chetrd_, c64, float)
AXLE_LAPACK_SYTRD(zhetrd_, c128, double)
#undef AXLE_LAPACK_TRSM
#undef AXLE_LAPACK_POTRF
#undef AXLE_LAPACK_GETRF
#undef AXLE_LAPACK_GEQRF
#undef AXLE_LAPACK_ORGQR
#undef AXLE_LAPACK_GEHRD
#undef AXLE_LAPACK_SYTRD
#undef AXLE_LAPACK_GTSV
#undef AXLE_LAPACK_ORMQR

// Symmetric / Hermitian eigendecomposition (divide and conquer).
#define AXLE_LAPACK_SYEVD(p, T)                                                                \
  void p##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, \
                 T* work, const int* lwork, int* iwork, const int* liwork, int* info, Len, Len);
#define AXLE_LAPACK_HEEVD(p, T, R)                                                             \
  void p##heevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w, \
                 T* work, const int* lwork, R* rwork, const int* lrwork, int* iwork,           \
                 const int* liwork, int* info, Len, Len);
AXLE_LAPACK_REAL_AND_COMPLEX(AXLE_LAPACK_SYEVD, AXLE_LAPACK_HEEVD)
#undef AXLE_LAPACK_SYEVD
#undef AXLE_LAPACK_HEEVD

// Singular value decomposition: divide and conquer (gesdd) and QR (gesvd).
#define AXLE_LAPACK_GESDD_REAL(p, T)                                                             \
  void p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u, \
                 const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, int* iwork,  \
                 int* info, Len);
#define AXLE_LAPACK_GESDD_COMPLEX(p, T, R)                                                       \
  void p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u, \
                 const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, R* rwork,    \
                 int* iwork, int* info, Len);
#define AXLE_LAPACK_GESVD_REAL(p, T)                                                          \
  void p##gesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, T* a,       \
                 const int* lda, T* s, T* u, const int* ldu, T* vt, const int* ldvt, T* work, \
                 const int* lwork, int* info, Len, Len);
#define AXLE_LAPACK_GESVD_COMPLEX(p, T, R)                                                    \
  void p##gesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, T* a,       \
                 const int* lda, R* s, T* u, const int* ldu, T* vt, const int* ldvt, T* work, \
                 const int* lwork, R* rwork, int* info, Len, Len);
AXLE_LAPACK_REAL_AND_COMPLEX(AXLE_LAPACK_GESDD_REAL, AXLE_LAPACK_GESDD_COMPLEX)
AXLE_LAPACK_REAL_AND_COMPLEX(AXLE_LAPACK_GESVD_REAL, AXLE_LAPACK_GESVD_COMPLEX)
#undef AXLE_LAPACK_GESDD_REAL
#undef AXLE_LAPACK_GESDD_COMPLEX
#undef AXLE_LAPACK_GESVD_REAL
#undef AXLE_LAPACK_GESVD_COMPLEX

// General eigendecomposition and Schur decomposition.
#define AXLE_LAPACK_GEEV_REAL(p, T)                                                               \
  void p##geev_(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* wr,  \
                T* wi, T* vl, const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork, \
                int* info, Len, Len);
#define AXLE_LAPACK_GEEV_COMPLEX(p, T, R)                                                       \
  void p##geev_(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* w, \
                T* vl, const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork,      \
                R* rwork, int* info, Len, Len);
#define AXLE_LAPACK_GEES_REAL(p, T)                                                         \
  void p##gees_(const char* jobvs, const char* sort, SelectReal select, const int* n, T* a, \
                const int* lda, int* sdim, T* wr, T* wi, T* vs, const int* ldvs, T* work,   \
                const int* lwork, int* bwork, int* info, Len, Len);
#define AXLE_LAPACK_GEES_COMPLEX(p, T, R)                                                      \
  void p##gees_(const char* jobvs, const char* sort, SelectComplex select, const int* n, T* a, \
                const int* lda, int* sdim, T* w, T* vs, const int* ldvs, T* work,              \
                const int* lwork, R* rwork, int* bwork, int* info, Len, Len);
AXLE_LAPACK_REAL_AND_COMPLEX(AXLE_LAPACK_GEEV_REAL, AXLE_LAPACK_GEEV_COMPLEX)
AXLE_LAPACK_REAL_AND_COMPLEX(AXLE_LAPACK_GEES_REAL, AXLE_LAPACK_GEES_COMPLEX)
#undef AXLE_LAPACK_GEEV_REAL
#undef AXLE_LAPACK_GEEV_COMPLEX
#undef AXLE_LAPACK_GEES_REAL
#undef AXLE_LAPACK_GEES_COMPLEX
}  // extern "C"

// --- Overloads by element type -------------------------------------------------

#define AXLE_LAPACK_OVERLOAD_TRSM(p, T)                                                            \
  inline void Trsm(char side, char uplo, char trans, char diag, int m, int n, T alpha, const T* a, \
                   int lda, T* b, int ldb) {                                                       \
    p##trsm_(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);           \
  }                                                                                                \
  inline void Potrf(char uplo, int n, T* a, int lda, int* info) {                                  \
    p##potrf_(&uplo, &n, a, &lda, info, 1);                                                        \
  }                                                                                                \
  inline void Getrf(int m, int n, T* a, int lda, int* ipiv, int* info) {                           \
    p##getrf_(&m, &n, a, &lda, ipiv, info);                                                        \
  }                                                                                                \
  inline void Geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info) {          \
    p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, info);                                           \
  }                                                                                                \
  inline void Gehrd(int n, int ilo, int ihi, T* a, int lda, T* tau, T* work, int lwork,            \
                    int* info) {                                                                   \
    p##gehrd_(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info);                                   \
  }                                                                                                \
  inline void Gtsv(int n, int nrhs, T* dl, T* d, T* du, T* b, int ldb, int* info) {                \
    p##gtsv_(&n, &nrhs, dl, d, du, b, &ldb, info);                                                 \
  }
AXLE_LAPACK_ALL_TYPES(AXLE_LAPACK_OVERLOAD_TRSM)
#undef AXLE_LAPACK_OVERLOAD_TRSM

#define AXLE_LAPACK_OVERLOAD_ORGQR_SYTRD(orgqr, sytrd, ormqr, T, R)                                \
  inline void Ormqr(char side, char trans, int m, int n, int k, const T* a, int lda, const T* tau, \
                    T* c, int ldc, T* work, int lwork, int* info) {                                \
    ormqr(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);             \
  }                                                                                                \
  inline void Orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork,          \
                    int* info) {                                                                   \
    orgqr(&m, &n, &k, a, &lda, tau, work, &lwork, info);                                           \
  }                                                                                                \
  inline void Sytrd(char uplo, int n, T* a, int lda, R* d, R* e, T* tau, T* work, int lwork,       \
                    int* info) {                                                                   \
    sytrd(&uplo, &n, a, &lda, d, e, tau, work, &lwork, info, 1);                                   \
  }
AXLE_LAPACK_OVERLOAD_ORGQR_SYTRD(sorgqr_, ssytrd_, sormqr_, float, float)
AXLE_LAPACK_OVERLOAD_ORGQR_SYTRD(dorgqr_, dsytrd_, dormqr_, double, double)
AXLE_LAPACK_OVERLOAD_ORGQR_SYTRD(cungqr_, chetrd_, cunmqr_, c64, float)
AXLE_LAPACK_OVERLOAD_ORGQR_SYTRD(zungqr_, zhetrd_, zunmqr_, c128, double)
#undef AXLE_LAPACK_OVERLOAD_ORGQR_SYTRD

// Real types: rwork is unused (pass nullptr, lrwork 0).
#define AXLE_LAPACK_OVERLOAD_REAL(p, T)                                                            \
  inline void Syevd(char jobz, char uplo, int n, T* a, int lda, T* w, T* work, int lwork,          \
                    T* /*rwork*/, int /*lrwork*/, int* iwork, int liwork, int* info) {             \
    p##syevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);             \
  }                                                                                                \
  inline void Gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt,  \
                    T* work, int lwork, T* /*rwork*/, int* iwork, int* info) {                     \
    p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);        \
  }                                                                                                \
  inline void Gesvd(char jobu, char jobvt, int m, int n, T* a, int lda, T* s, T* u, int ldu,       \
                    T* vt, int ldvt, T* work, int lwork, T* /*rwork*/, int* info) {                \
    p##gesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);    \
  }                                                                                                \
  inline void Geev(char jobvl, char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vl, int ldvl,    \
                   T* vr, int ldvr, T* work, int lwork, int* info) {                               \
    p##geev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1); \
  }                                                                                                \
  inline void Geqp3(int m, int n, T* a, int lda, int* jpvt, T* tau, T* work, int lwork,            \
                    T* /*rwork*/, int* info) {                                                     \
    p##geqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, info);                                     \
  }                                                                                                \
  inline void Gees(char jobvs, int n, T* a, int lda, int* sdim, T* wr, T* wi, T* vs, int ldvs,     \
                   T* work, int lwork, int* info) {                                                \
    const char sort = 'N';                                                                         \
    p##gees_(&jobvs, &sort, nullptr, &n, a, &lda, sdim, wr, wi, vs, &ldvs, work, &lwork, nullptr,  \
             info, 1, 1);                                                                          \
  }

#define AXLE_LAPACK_OVERLOAD_COMPLEX(p, T, R)                                                      \
  inline void Syevd(char jobz, char uplo, int n, T* a, int lda, R* w, T* work, int lwork,          \
                    R* rwork, int lrwork, int* iwork, int liwork, int* info) {                     \
    p##heevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, \
              1);                                                                                  \
  }                                                                                                \
  inline void Gesdd(char jobz, int m, int n, T* a, int lda, R* s, T* u, int ldu, T* vt, int ldvt,  \
                    T* work, int lwork, R* rwork, int* iwork, int* info) {                         \
    p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1); \
  }                                                                                                \
  inline void Gesvd(char jobu, char jobvt, int m, int n, T* a, int lda, R* s, T* u, int ldu,       \
                    T* vt, int ldvt, T* work, int lwork, R* rwork, int* info) {                    \
    p##gesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, info, 1, \
              1);                                                                                  \
  }                                                                                                \
  inline void Geev(char jobvl, char jobvr, int n, T* a, int lda, T* w, T* vl, int ldvl, T* vr,     \
                   int ldvr, T* work, int lwork, R* rwork, int* info) {                            \
    p##geev_(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1,   \
             1);                                                                                   \
  }                                                                                                \
  inline void Geqp3(int m, int n, T* a, int lda, int* jpvt, T* tau, T* work, int lwork, R* rwork,  \
                    int* info) {                                                                   \
    p##geqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, info);                              \
  }                                                                                                \
  inline void Gees(char jobvs, int n, T* a, int lda, int* sdim, T* w, T* vs, int ldvs, T* work,    \
                   int lwork, R* rwork, int* info) {                                               \
    const char sort = 'N';                                                                         \
    p##gees_(&jobvs, &sort, nullptr, &n, a, &lda, sdim, w, vs, &ldvs, work, &lwork, rwork,         \
             nullptr, info, 1, 1);                                                                 \
  }
AXLE_LAPACK_REAL_AND_COMPLEX(AXLE_LAPACK_OVERLOAD_REAL, AXLE_LAPACK_OVERLOAD_COMPLEX)
#undef AXLE_LAPACK_OVERLOAD_REAL
#undef AXLE_LAPACK_OVERLOAD_COMPLEX
#undef AXLE_LAPACK_ALL_TYPES
#undef AXLE_LAPACK_REAL_AND_COMPLEX

}  // namespace axle::jaxlib::lapack

#endif  // AXLE_CPU_JAXLIB_LAPACK_INTERNAL_H_
