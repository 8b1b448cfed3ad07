package egress_test

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/stepbox/stepbox/internal/egress"
)

func ExampleClassifyIP() {
	for _, s := range []string{"93.184.216.34", "10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1"} {
		class, denied := egress.ClassifyIP(netip.MustParseAddr(s))
		fmt.Println(s, class, denied)
	}
	// Output:
	// 93.184.216.34 public false
	// 10.0.0.1 private true
	// ::ffff:169.254.169.254 metadata true
	// 64:ff9b::7f00:1 loopback true
}

func ExamplePolicy_Narrow() {
	engine := egress.Policy{Hosts: []string{"*.example.com"}, MaxRequests: 50}
	plan := egress.Policy{Hosts: []string{"api.example.com", "other.test"}, Methods: []string{"GET"}, MaxRequests: 10}
	p := engine.Narrow(plan)
	fmt.Println(p.Hosts, p.Methods, p.MaxRequests)
	// Output: [api.example.com] [GET] 10
}

func ExampleParsePolicy() {
	_, err := egress.ParsePolicy([]byte(`{"hosts":["https://api.example.com","*.example.com"],"ports":[0]}`))
	fmt.Println(err)
	// Output:
	// egress: policy: hosts[0]: "https://api.example.com" is not a host pattern: remove the scheme (see schemes)
	// egress: policy: ports[0]: 0 is not a port (want 1-65535)
}

func ExampleError() {
	var err error = &egress.Error{Kind: egress.KindLimit, Limit: egress.LimitRequests,
		Reason: "request limit reached (maxFetchRequests=5)"}
	var fe *egress.Error
	switch {
	case errors.As(err, &fe) && fe.Kind == egress.KindLimit:
		fmt.Println("end the run: LIMIT_EXCEEDED", fe.Limit)
	case errors.As(err, &fe):
		fmt.Println("throw TypeError:", fe.Reason)
	}
	fmt.Println(errors.Is(err, egress.ErrLimit), errors.Is(err, egress.ErrDenied))
	// Output:
	// end the run: LIMIT_EXCEEDED maxFetchRequests
	// true false
}
