// A trivial run measured as the workloads are (one engine, one run at a
// time, the median of a few): the baseline the intl and web columns
// compare with.
return 1 + 1;
