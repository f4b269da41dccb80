/* An instruction counter for qemu user-mode emulation (its TCG plugin
 * interface, version 1: qemu 6.0 to 8.x), for scripts/aarch64-counts.sh.
 * It adds each translated block's instruction count to one counter every
 * time the block runs (an inline add, no callback), and prints the total
 * on stderr at exit: "instructions: N". Single-threaded guests only (the
 * add is not atomic).
 *
 * Only the five functions and two types it uses are declared here, as
 * qemu's plugin interface defines them, so it builds without qemu's
 * source: cc -shared -fPIC -O2 -o libinsn.so qemu-insn-count.c
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

extern void qemu_plugin_register_vcpu_tb_trans_cb(
    qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(
    struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr, uint64_t imm);
extern void qemu_plugin_register_atexit_cb(
    qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *), void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t instructions;

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(
        tb, QEMU_PLUGIN_INLINE_ADD_U64, &instructions, qemu_plugin_tb_n_insns(tb));
}

static void finished(qemu_plugin_id_t id, void *userdata) {
    (void)id;
    (void)userdata;
    fprintf(stderr, "instructions: %llu\n", (unsigned long long)instructions);
}

__attribute__((visibility("default"))) int qemu_plugin_install(
    qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void)info;
    (void)argc;
    (void)argv;
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    qemu_plugin_register_atexit_cb(id, finished, NULL);
    return 0;
}
