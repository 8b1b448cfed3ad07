/* solve.h: one GLPK solve in one C call (see solve.c). */

#ifndef STEPBOX_GLPK_SOLVE_H
#define STEPBOX_GLPK_SOLVE_H

/* Flags sb_solve sets in *flags. */
#define SB_MIP 1       /* the problem has integer columns; x is the MIP solution, dual is unset */
#define SB_FAILED 2    /* GLPK reported an internal error; msg holds its text */
#define SB_STOPPED 4   /* *cancel was set and the MIP search stopped early */

/* Problem data. Arrays ia, ja and ar are 1-based as glp_load_matrix wants
 * them (element 0 is unused); all others are 0-based. */
typedef struct {
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
} sb_params;

typedef struct {
	int status;             /* GLP_UNDEF .. GLP_UNBND */
	double z;
	double *x;              /* [ncols], written */
	double *dual;           /* [nrows], written for LPs */
	int ret;                /* return code of the last GLPK solver call */
	int flags;              /* SB_* */
	char msg[512];          /* GLPK's message when SB_FAILED */
} sb_result;

void sb_solve(const sb_problem *p, const sb_params *prm, sb_result *r);

#endif
