//go:build cgo && !stepbox_noglpk

/* solve.c: one GLPK solve in one C call.
 *
 * Everything GLPK does for a solve happens inside sb_solve, on the calling
 * thread, with no Go frame in between:
 *
 *  - GLPK keeps its environment (memory accounting, terminal hooks, error
 *    state) in thread-local storage. One call from Go runs on one OS
 *    thread, so the environment sb_solve sees is its own, and it frees it
 *    with glp_free_env before returning: nothing of a solve survives it.
 *  - GLPK never writes to the process's standard output or error: terminal
 *    output is off and a hook swallows what GLPK prints anyway (its error
 *    messages turn output back on).
 *  - On an internal error (a failed assertion, memory exhausted, the
 *    glp_mem_limit crossed) GLPK calls the error hook and then abort().
 *    The hook longjmps back to sb_solve instead, which frees the
 *    environment and reports SB_FAILED with GLPK's message. This is the
 *    recovery the GLPK manual describes for glp_error_hook; it is safe
 *    here because only C frames lie between setjmp and longjmp.
 */

#include <glpk.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "solve.h"

typedef struct {
	jmp_buf jb;
	char buf[512];
	size_t len;
} sb_env;

/* term_hook collects GLPK's output (only error messages reach it, since
 * terminal output is off) and returns non-zero so that nothing is printed. */
static int term_hook(void *info, const char *s) {
	sb_env *e = info;
	size_t n = strlen(s);
	if (e->len + n >= sizeof e->buf) {
		n = sizeof e->buf - 1 - e->len;
	}
	memcpy(e->buf + e->len, s, n);
	e->len += n;
	e->buf[e->len] = '\0';
	return 1;
}

static void error_hook(void *info) {
	sb_env *e = info;
	longjmp(e->jb, 1);
}

/* mip_callback stops the branch-and-bound search once Go sets *cancel. */
static void mip_callback(glp_tree *T, void *info) {
	const int *cancel = info;
	if (cancel != NULL && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
		glp_ios_terminate(T);
	}
}

static long long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* remaining returns what is left of tm_lim (ms) since start, at least 1. */
static int remaining(int tm_lim, long long start) {
	long long left;
	if (tm_lim == INT_MAX) {
		return INT_MAX;
	}
	left = tm_lim - (now_ms() - start);
	return left < 1 ? 1 : (int)left;
}

static int simplex(glp_prob *P, int presolve, int tm_lim) {
	glp_smcp parm;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = presolve;
	parm.tm_lim = tm_lim;
	return glp_simplex(P, &parm);
}

/* basic_solution writes the LP's basic solution: x, row duals and row
 * activities. */
static void basic_solution(glp_prob *P, double *x, double *dual, double *rows, int ncols, int nrows) {
	int j, i;
	for (j = 1; j <= ncols; j++) {
		x[j - 1] = glp_get_col_prim(P, j);
	}
	for (i = 1; i <= nrows; i++) {
		dual[i - 1] = glp_get_row_dual(P, i);
		rows[i - 1] = glp_get_row_prim(P, i);
	}
}

/* stepped solves an LP as glpk.js 5 does when options.cb is given: the
 * presolver off, glp_simplex called again and again with an iteration
 * limit that grows by each (solve_lp_itlim), and a snapshot after every
 * call, until the status is GLP_OPT, GLP_NOFEAS, GLP_UNBND or GLP_UNDEF.
 * It also stops at the time limit, on a GLPK error other than the
 * iteration limit, when *cancel is set, and when the snapshots are full
 * (SB_STEPS_FULL), where glpk.js would go on. */
static void stepped(glp_prob *P, const sb_params *prm, sb_result *r, int ncols, int nrows, long long start) {
	glp_smcp parm;
	int stride = 3 + ncols + 2 * nrows;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_OFF;
	parm.it_lim = prm->each;
	for (;;) {
		double *s;
		int status;
		parm.it_lim = parm.it_lim > INT_MAX - prm->each ? INT_MAX : parm.it_lim + prm->each;
		parm.tm_lim = remaining(prm->tm_lim, start);
		r->ret = glp_simplex(P, &parm);
		status = glp_get_status(P);
		if (r->nsteps == prm->max_steps) {
			r->flags |= SB_STEPS_FULL;
			break;
		}
		s = r->steps + (size_t)r->nsteps * stride;
		s[0] = status;
		s[1] = glp_get_obj_val(P);
		s[2] = r->ret;
		basic_solution(P, s + 3, s + 3 + ncols, s + 3 + ncols + nrows, ncols, nrows);
		r->nsteps++;
		if (status == GLP_OPT || status == GLP_NOFEAS || status == GLP_UNBND || status == GLP_UNDEF) {
			break;
		}
		if ((r->ret != 0 && r->ret != GLP_EITLIM) ||
		    (prm->cancel != NULL && __atomic_load_n(prm->cancel, __ATOMIC_RELAXED))) {
			break;
		}
	}
	r->status = glp_get_status(P);
	r->z = glp_get_obj_val(P);
	basic_solution(P, r->x, r->dual, r->rows, ncols, nrows);
}

static void solve(glp_prob *P, const sb_params *prm, sb_result *r, int ncols, int nrows) {
	long long start = now_ms();
	int j, i;

	if (glp_get_num_int(P) == 0 && prm->each > 0) {
		stepped(P, prm, r, ncols, nrows, start);
		return;
	}
	if (glp_get_num_int(P) == 0) {
		r->ret = simplex(P, prm->presolve, prm->tm_lim);
		if (prm->presolve == GLP_ON && (r->ret == GLP_ENOPFS || r->ret == GLP_ENODFS)) {
			/* The presolver proved the LP infeasible or unbounded but
			 * leaves no solution; solve without it to get GLPK's own
			 * status (GLP_NOFEAS or GLP_UNBND) and a basic solution. */
			r->ret = simplex(P, GLP_OFF, remaining(prm->tm_lim, start));
		}
		r->status = glp_get_status(P);
		r->z = glp_get_obj_val(P);
		basic_solution(P, r->x, r->dual, r->rows, ncols, nrows);
		return;
	}

	r->flags |= SB_MIP;
	{
		glp_iocp parm;
		glp_init_iocp(&parm);
		parm.msg_lev = GLP_MSG_OFF;
		parm.mip_gap = prm->mip_gap;
		parm.cb_func = mip_callback;
		parm.cb_info = (void *)prm->cancel;
		if (prm->presolve == GLP_ON) {
			parm.presolve = GLP_ON;
			parm.tm_lim = prm->tm_lim;
			r->ret = glp_intopt(P, &parm);
			switch (r->ret) {
			case GLP_ENOPFS: /* the MIP, or its LP relaxation, is infeasible */
				r->status = GLP_NOFEAS;
				break;
			case GLP_ENODFS: /* the LP relaxation is unbounded */
				r->status = GLP_UNBND;
				break;
			default:
				r->status = glp_mip_status(P);
			}
		} else {
			/* Without the presolver glp_intopt needs an optimal basis of
			 * the LP relaxation to start from. */
			r->ret = simplex(P, GLP_OFF, prm->tm_lim);
			switch (r->ret == 0 ? glp_get_status(P) : GLP_UNDEF) {
			case GLP_OPT:
				parm.presolve = GLP_OFF;
				parm.tm_lim = remaining(prm->tm_lim, start);
				r->ret = glp_intopt(P, &parm);
				r->status = glp_mip_status(P);
				break;
			case GLP_NOFEAS:
				r->status = GLP_NOFEAS;
				break;
			case GLP_UNBND:
				r->status = GLP_UNBND;
				break;
			default:
				r->status = GLP_UNDEF;
			}
		}
		if (r->ret == GLP_ESTOP) {
			r->flags |= SB_STOPPED;
		}
	}
	r->z = glp_mip_obj_val(P);
	for (j = 1; j <= ncols; j++) {
		r->x[j - 1] = glp_mip_col_val(P, j);
	}
	for (i = 1; i <= nrows; i++) {
		r->rows[i - 1] = glp_mip_row_val(P, i);
	}
}

/* build makes the GLPK problem of p, with its names when p has them. */
static glp_prob *build(const sb_problem *p) {
	glp_prob *P = glp_create_prob();
	int j, i;
	if (p->name != NULL) {
		glp_set_prob_name(P, p->name);
	}
	glp_set_obj_dir(P, p->dir);
	if (p->nrows > 0) {
		glp_add_rows(P, p->nrows);
	}
	glp_add_cols(P, p->ncols);
	for (i = 1; i <= p->nrows; i++) {
		if (p->rownames != NULL) {
			glp_set_row_name(P, i, p->rownames[i - 1]);
		}
		glp_set_row_bnds(P, i, p->rtype[i - 1], p->rlb[i - 1], p->rub[i - 1]);
	}
	for (j = 1; j <= p->ncols; j++) {
		if (p->colnames != NULL) {
			glp_set_col_name(P, j, p->colnames[j - 1]);
		}
		glp_set_obj_coef(P, j, p->obj[j - 1]);
		glp_set_col_bnds(P, j, p->ctype[j - 1], p->clb[j - 1], p->cub[j - 1]);
		if (p->ckind[j - 1] != GLP_CV) {
			/* GLP_BV also sets the bounds to [0, 1], as in glpk.js */
			glp_set_col_kind(P, j, p->ckind[j - 1]);
		}
	}
	if (p->nnz > 0) {
		glp_load_matrix(P, p->nnz, p->ia, p->ja, p->ar);
	}
	return P;
}

void sb_solve(const sb_problem *p, const sb_params *prm, sb_result *r) {
	/* volatile: read after longjmp */
	sb_env *volatile e = NULL;
	sb_env env;
	glp_prob *P;

	memset(&env, 0, sizeof env);
	e = &env;
	r->flags = 0;
	r->nsteps = 0;
	r->msg[0] = '\0';

	glp_term_hook(term_hook, e);
	glp_term_out(GLP_OFF);
	if (setjmp(e->jb) != 0) {
		/* An internal GLPK error: everything GLPK allocated is released
		 * with its environment. */
		r->flags |= SB_FAILED;
		strncpy(r->msg, e->buf, sizeof r->msg - 1);
		r->msg[sizeof r->msg - 1] = '\0';
		glp_free_env();
		return;
	}
	glp_error_hook(error_hook, e);
	if (prm->mem_mb > 0) {
		glp_mem_limit(prm->mem_mb);
	}

	P = build(p);
	solve(P, prm, r, p->ncols, p->nrows);

	glp_delete_prob(P);
	glp_free_env();
}

/* write_lock serialises the writers: each points the C library's stdout
 * at its own memory stream while GLPK writes. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

void sb_write(const sb_problem *p, int format, sb_result *r, char **out, size_t *len) {
	sb_env *volatile e = NULL;
	sb_env env;
	glp_prob *volatile P = NULL;
	FILE *volatile saved = NULL;
	FILE *mem;
	int ret;

	memset(&env, 0, sizeof env);
	e = &env;
	r->flags = 0;
	r->msg[0] = '\0';
	*out = NULL;
	*len = 0;

	mem = open_memstream(out, len);
	if (mem == NULL) {
		r->flags |= SB_FAILED;
		strcpy(r->msg, "no memory for the text");
		return;
	}
	pthread_mutex_lock(&write_lock);
	glp_term_hook(term_hook, e);
	glp_term_out(GLP_OFF);
	if (setjmp(e->jb) != 0) {
		r->flags |= SB_FAILED;
		strncpy(r->msg, e->buf, sizeof r->msg - 1);
		r->msg[sizeof r->msg - 1] = '\0';
		if (saved != NULL) {
			stdout = saved;
		}
		pthread_mutex_unlock(&write_lock);
		glp_free_env();
		fclose(mem);
		return;
	}
	glp_error_hook(error_hook, e);
	P = build(p);
	glp_sort_matrix(P); /* as glpk.js does: terms in column order */
	/* GLPK writes "/dev/stdout" to the C library's stdout, a variable
	 * glibc lets a program set: here, the memory stream. */
	saved = stdout;
	stdout = mem;
	if (format == SB_WRITE_MPS) {
		ret = glp_write_mps(P, GLP_MPS_FILE, NULL, "/dev/stdout");
	} else {
		ret = glp_write_lp(P, NULL, "/dev/stdout");
	}
	fflush(mem);
	stdout = saved;
	saved = NULL;
	pthread_mutex_unlock(&write_lock);
	if (ret != 0) {
		r->flags |= SB_FAILED;
		strncpy(r->msg, e->len > 0 ? e->buf : "GLPK could not write the problem", sizeof r->msg - 1);
		r->msg[sizeof r->msg - 1] = '\0';
	}
	glp_delete_prob(P);
	glp_free_env();
	fclose(mem);
}

/* sb_fail_for_test makes GLPK report an internal error (an invalid
 * objective direction), to test the recovery above. */
void sb_fail_for_test(sb_result *r) {
	sb_env *volatile e = NULL;
	sb_env env;
	glp_prob *P;

	memset(&env, 0, sizeof env);
	e = &env;
	r->flags = 0;
	glp_term_hook(term_hook, e);
	glp_term_out(GLP_OFF);
	if (setjmp(e->jb) != 0) {
		r->flags |= SB_FAILED;
		strncpy(r->msg, e->buf, sizeof r->msg - 1);
		r->msg[sizeof r->msg - 1] = '\0';
		glp_free_env();
		return;
	}
	glp_error_hook(error_hook, e);
	P = glp_create_prob();
	glp_set_obj_dir(P, 99);
	glp_delete_prob(P);
	glp_free_env();
}
