// ggml's AMX tile configuration (ggml/src/ggml-cpu/amx/mmq.cpp, ggml_tile_config_init), alone and
// built as ggml builds it (C++, -O3). g++ 12.2 drops the stores to the config before ldtilecfg,
// so the tiles stay unconfigured and llama.cpp dies of SIGILL at its first AMX matmul, although
// AMX itself runs. -DQA_TILE_BARRIER adds the compiler barrier of amx_gcc12_fix.patch.
#include <immintrin.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct tile_config_t { uint8_t palette_id = 0; uint8_t start_row = 0; uint8_t reserved_0[14] = {0};
                       uint16_t colsb[16] = {0}; uint8_t rows[16] = {0}; };

__attribute__((noinline)) void init() {
    alignas(64) tile_config_t tc = {};
    tc.palette_id = 1;
    tc.start_row = 0;
    for (int t = 0; t < 8; t++) { tc.rows[t] = 16; tc.colsb[t] = 64; }
#ifdef QA_TILE_BARRIER
    __asm__ __volatile__("" : : "r"(&tc) : "memory");
#endif
    _tile_loadconfig(&tc);
}

int main() {
    if (syscall(SYS_arch_prctl, 0x1023, 18)) return 3;
    init();
    _tile_zero(4);
    _tile_release();
    return 0;
}
