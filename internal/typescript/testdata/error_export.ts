const shared = 1;
export const value = shared;
export default shared;
return shared;
