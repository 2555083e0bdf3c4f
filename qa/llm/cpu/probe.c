/* One x86 extension at a time (the PROBE_* macro names it): the program exits 0 only when the
 * instruction ran and gave the right answer. qa/llm/probe.py builds and runs it in a subprocess:
 * a virtual machine may advertise an extension (AMX) whose instructions fault. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#if defined(PROBE_AMX_INT8) || defined(PROBE_AMX_BF16)
#include <sys/syscall.h>
#include <unistd.h>
struct tilecfg { uint8_t palette; uint8_t start_row; uint8_t reserved[14];
                 uint16_t colsb[16]; uint8_t rows[16]; } __attribute__((packed));
#endif

int main(void) {
#if defined(PROBE_AVX2)
    volatile float x = 1.5f;
    __m256 a = _mm256_set1_ps(x), r = _mm256_fmadd_ps(a, a, a);            /* 1.5*1.5+1.5 = 3.75 */
    float out[8]; _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm256_cvtps_ph(r, 0)));
    __m256i i = _mm256_add_epi32(_mm256_set1_epi32((int)x), _mm256_set1_epi32(2));
    return !(out[7] == 3.75f && _mm256_extract_epi32(i, 7) == 3);
#elif defined(PROBE_AVX512)
    volatile int x = 3;
    __m512i a = _mm512_set1_epi32(x);
    return !(_mm512_reduce_add_epi32(_mm512_add_epi8(a, a)) == 16 * 6);
#elif defined(PROBE_AVX512_VNNI)
    volatile int x = 2;
    __m512i r = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char)x), _mm512_set1_epi8(3));
    return !(_mm512_reduce_add_epi32(r) == 16 * 24);                       /* 4 * 2*3 per lane */
#elif defined(PROBE_AVX512_BF16)
    volatile float x = 2.0f;
    __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(x), _mm512_set1_ps(x));
    return !(_mm512_reduce_add_ps(_mm512_dpbf16_ps(_mm512_setzero_ps(), a, a)) == 16 * 8.0f);
#elif defined(PROBE_AVX512_VBMI)
    volatile char x = 7;
    uint8_t idx[64], out[64];
    for (int k = 0; k < 64; k++) idx[k] = 63 - k;
    __m512i t = _mm512_mask_blend_epi8(1ULL << 63, _mm512_set1_epi8(x), _mm512_set1_epi8(9));
    _mm512_storeu_si512(out, _mm512_permutexvar_epi8(_mm512_loadu_si512(idx), t));  /* 63 -> 0 */
    return !(out[0] == 9 && out[1] == 7);
#elif defined(PROBE_AVX_VNNI)
    volatile int x = 2;
    __m256i r = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_set1_epi8((char)x), _mm256_set1_epi8(3));
    return !(_mm256_extract_epi32(r, 7) == 24);
#elif defined(PROBE_AMX_INT8) || defined(PROBE_AMX_BF16)
    /* Linux hands out AMX tile state only on request (arch_prctl XCOMP_PERM, XTILEDATA). */
    if (syscall(SYS_arch_prctl, 0x1023, 18)) return 3;
    struct tilecfg cfg; memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 3; t++) { cfg.rows[t] = 16; cfg.colsb[t] = 64; }
    _tile_loadconfig(&cfg);
#if defined(PROBE_AMX_INT8)
    static int8_t a[16 * 64], b[16 * 64]; static int32_t c[16 * 16];
    memset(a, 1, sizeof a); memset(b, 2, sizeof b);
    _tile_zero(0); _tile_loadd(1, a, 64); _tile_loadd(2, b, 64); _tile_dpbssd(0, 1, 2); _tile_stored(0, c, 64);
    _tile_release();
    return !(c[0] == 128 && c[255] == 128);
#else
    static uint16_t a[16 * 32], b[16 * 32]; static float c[16 * 16];
    for (int k = 0; k < 16 * 32; k++) { a[k] = 0x3f80; b[k] = 0x4000; }   /* bf16 1.0 and 2.0 */
    _tile_zero(0); _tile_loadd(1, a, 64); _tile_loadd(2, b, 64); _tile_dpbf16ps(0, 1, 2); _tile_stored(0, c, 64);
    _tile_release();
    return !(c[0] == 64.0f && c[255] == 64.0f);
#endif
#else
#error "name a PROBE_* feature"
#endif
}
