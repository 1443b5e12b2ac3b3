/* seccomp_eval.c — a classic-BPF interpreter for seccomp filters, as the kernel runs them
 * (kernel/seccomp.c seccomp_check_filter, net/core/filter.c bpf_check_classic): A and X are
 * 32 bits, 16 words of scratch memory, loads only of aligned 32-bit words of struct
 * seccomp_data, jumps only forward. Anything else makes the program invalid: the caller then
 * cannot show that a call is allowed. */
#include "seccomp_eval.h"

#include <errno.h>
#include <string.h>

#define SCRATCH_WORDS 16

static int alu(uint16_t op, uint32_t *a, uint32_t operand)
{
	switch (op) {
	case BPF_ADD: *a += operand; return 0;
	case BPF_SUB: *a -= operand; return 0;
	case BPF_MUL: *a *= operand; return 0;
	case BPF_DIV:
		if (!operand)
			return 1;	/* the program ends, returning 0 */
		*a /= operand;
		return 0;
	case BPF_MOD:
		if (!operand)
			return 1;
		*a %= operand;
		return 0;
	case BPF_AND: *a &= operand; return 0;
	case BPF_OR: *a |= operand; return 0;
	case BPF_XOR: *a ^= operand; return 0;
	case BPF_LSH: *a <<= operand & 31; return 0;
	case BPF_RSH: *a >>= operand & 31; return 0;
	case BPF_NEG: *a = -*a; return 0;
	default: return -EINVAL;
	}
}

static bool jump_taken(uint16_t op, uint32_t a, uint32_t operand)
{
	switch (op) {
	case BPF_JEQ: return a == operand;
	case BPF_JGT: return a > operand;
	case BPF_JGE: return a >= operand;
	case BPF_JSET: return (a & operand) != 0;
	default: return false;
	}
}

int seccomp_eval_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d,
		     uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[SCRATCH_WORDS] = { 0 };
	unsigned char data[sizeof *d];
	memcpy(data, d, sizeof data);
	if (len == 0 || len > BPF_MAXINSNS)
		return -EINVAL;
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *in = &prog[pc];
		uint32_t k = in->k;
		uint16_t code = in->code;
		switch (BPF_CLASS(code)) {
		case BPF_LD:
			if (code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (k % 4 || k > sizeof data - 4)
					return -EINVAL;
				memcpy(&a, data + k, 4);
			} else if (code == (BPF_LD | BPF_W | BPF_LEN)) {
				a = sizeof data;
			} else if (code == (BPF_LD | BPF_IMM)) {
				a = k;
			} else if (code == (BPF_LD | BPF_MEM) && k < SCRATCH_WORDS) {
				a = mem[k];
			} else {
				return -EINVAL;
			}
			break;
		case BPF_LDX:
			if (code == (BPF_LDX | BPF_W | BPF_LEN))
				x = sizeof data;
			else if (code == (BPF_LDX | BPF_IMM))
				x = k;
			else if (code == (BPF_LDX | BPF_MEM) && k < SCRATCH_WORDS)
				x = mem[k];
			else
				return -EINVAL;
			break;
		case BPF_ST:
		case BPF_STX:
			if (code != BPF_ST && code != BPF_STX)
				return -EINVAL;
			if (k >= SCRATCH_WORDS)
				return -EINVAL;
			mem[k] = code == BPF_ST ? a : x;
			break;
		case BPF_ALU: {
			uint16_t op = BPF_OP(code);
			if (op != BPF_NEG && BPF_SRC(code) == BPF_K && (op == BPF_DIV || op == BPF_MOD) && !k)
				return -EINVAL;	/* refused when loaded */
			int r = alu(op, &a, BPF_SRC(code) == BPF_X ? x : k);
			if (r < 0)
				return r;
			if (r > 0) {
				*ret = 0;
				return 0;
			}
			break;
		}
		case BPF_JMP: {
			uint16_t op = BPF_OP(code);
			size_t to;
			if (op == BPF_JA) {
				if (k >= len - pc - 1)
					return -EINVAL;
				to = pc + 1 + k;
			} else if (op == BPF_JEQ || op == BPF_JGT || op == BPF_JGE || op == BPF_JSET) {
				if (in->jt >= len - pc - 1 || in->jf >= len - pc - 1)
					return -EINVAL;
				uint32_t operand = BPF_SRC(code) == BPF_X ? x : k;
				to = pc + 1 + (jump_taken(op, a, operand) ? in->jt : in->jf);
			} else {
				return -EINVAL;
			}
			pc = to - 1;	/* the loop adds one */
			break;
		}
		case BPF_RET:
			if (code == (BPF_RET | BPF_K))
				*ret = k;
			else if (code == (BPF_RET | BPF_A))
				*ret = a;
			else
				return -EINVAL;
			return 0;
		case BPF_MISC:
			if (code == (BPF_MISC | BPF_TAX))
				x = a;
			else if (code == (BPF_MISC | BPF_TXA))
				a = x;
			else
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;	/* ran off the end: the kernel requires a return last */
}

/* As the kernel compares them: the action bits as a signed number, lowest wins. */
static int32_t action_rank(uint32_t ret)
{
	return (int32_t)(ret & SECCOMP_RET_ACTION_FULL);
}

uint32_t seccomp_eval_combine(uint32_t a, uint32_t b)
{
	return action_rank(b) < action_rank(a) ? b : a;
}

bool seccomp_eval_allows(uint32_t ret)
{
	uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
	return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG;
}

const char *seccomp_eval_action_name(uint32_t ret)
{
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS: return "SECCOMP_RET_KILL_PROCESS";
	case SECCOMP_RET_KILL_THREAD: return "SECCOMP_RET_KILL_THREAD";
	case SECCOMP_RET_TRAP: return "SECCOMP_RET_TRAP";
	case SECCOMP_RET_ERRNO: return "SECCOMP_RET_ERRNO";
	case SECCOMP_RET_USER_NOTIF: return "SECCOMP_RET_USER_NOTIF";
	case SECCOMP_RET_TRACE: return "SECCOMP_RET_TRACE";
	case SECCOMP_RET_LOG: return "SECCOMP_RET_LOG";
	case SECCOMP_RET_ALLOW: return "SECCOMP_RET_ALLOW";
	default: return "an unknown action";
	}
}
