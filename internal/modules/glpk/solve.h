/* solve.h: one GLPK solve in one C call (see solve.c). */

#ifndef STEPBOX_GLPK_SOLVE_H
#define STEPBOX_GLPK_SOLVE_H

#include <stddef.h>

/* Flags sb_solve sets in *flags. */
#define SB_MIP 1       /* the problem has integer columns; x is the MIP solution, dual is unset */
#define SB_FAILED 2    /* GLPK reported an internal error; msg holds its text */
#define SB_STOPPED 4   /* *cancel was set and the MIP search stopped early */
#define SB_STEPS_FULL 8 /* an LP solved in steps needed more than max_steps */

/* Problem data. Arrays ia, ja and ar are 1-based as glp_load_matrix wants
 * them (element 0 is unused); all others are 0-based. */
typedef struct {
	const char *name;       /* the problem's name, or NULL */
	const char *const *colnames, *const *rownames; /* [ncols], [nrows], or NULL */
	int dir;                /* GLP_MIN or GLP_MAX */
	int ncols, nrows, nnz;
	const double *obj;      /* [ncols] objective coefficients */
	const int *ctype;       /* [ncols] GLP_FR .. GLP_FX */
	const double *clb, *cub;
	const int *ckind;       /* [ncols] GLP_CV, GLP_IV or GLP_BV */
	const int *rtype;       /* [nrows] */
	const double *rlb, *rub;
	const int *ia, *ja;     /* [nnz+1] */
	const double *ar;       /* [nnz+1] */
} sb_problem;

typedef struct {
	int presolve;           /* GLP_ON or GLP_OFF */
	double mip_gap;
	int tm_lim;             /* ms; INT_MAX for none */
	int mem_mb;             /* glp_mem_limit, 0 for none */
	const int *cancel;      /* read atomically; non-zero stops a MIP search */
	int each;               /* > 0: solve an LP in steps, as glpk.js does for
	                         * options.cb: presolver off, glp_simplex called
	                         * with it_lim 2*each, 3*each, ..., and a snapshot
	                         * of the basic solution after each call */
	int max_steps;          /* snapshots that fit in sb_result.steps */
} sb_params;

typedef struct {
	int status;             /* GLP_UNDEF .. GLP_UNBND */
	double z;
	double *x;              /* [ncols], written */
	double *dual;           /* [nrows], written for LPs */
	double *rows;           /* [nrows], written: row activities (glp_get_row_prim,
	                         * or glp_mip_row_val for a MIP) */
	double *steps;          /* [max_steps][3 + ncols + 2*nrows] when each > 0:
	                         * status, z, return code, x, dual, rows */
	int nsteps;             /* snapshots written */
	int ret;                /* return code of the last GLPK solver call */
	int flags;              /* SB_* */
	char msg[512];          /* GLPK's message when SB_FAILED */
} sb_result;

void sb_solve(const sb_problem *p, const sb_params *prm, sb_result *r);

/* Formats of sb_write. */
#define SB_WRITE_LP 0   /* CPLEX LP, as glp_write_lp writes it */
#define SB_WRITE_MPS 1  /* free MPS, as glp_write_mps writes GLP_MPS_FILE */

/* sb_write writes p (with its names) as text into *out, *len bytes, which
 * the caller frees; on an error r->flags has SB_FAILED and r->msg says why. */
void sb_write(const sb_problem *p, int format, sb_result *r, char **out, size_t *len);

#endif
