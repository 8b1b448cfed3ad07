await null;
let x = 1;
with (x) {}
let y = 010;
delete x;
