// A code step: the body of an async function. `input` is the run's input;
// dataProxy.request asks the host for data; the return value is the result.
reportStatus({ stage: "loading" });
const orders = await dataProxy.request("orders", { customer: input.customer });
console.log(`got ${orders.length} orders for ${input.customer}`);
const total = orders.reduce((sum, o) => sum + o.amount, 0);
return { customer: input.customer, orders: orders.length, total };
