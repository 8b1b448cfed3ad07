namespace N {
  return 1;
}
