package egress_test

import (
	"fmt"

	"github.com/stepbox/stepbox/internal/egress"
)

func ExampleBinding_Validate() {
	for _, b := range []egress.Binding{
		{Origin: "https://api.example.com:8443", Header: "Authorization", Value: "Bearer 0123456789"},
		{Origin: "http://api.example.com", Header: "Authorization", Value: "Bearer 0123456789"},
		{Host: "api.example.com:8443", Header: "Authorization", Value: "Bearer 0123456789"},
	} {
		fmt.Println(b.Validate())
	}
	// Output:
	// <nil>
	// origin: "http://api.example.com" is plain http: the secret would travel in clear text; use an https origin, or set unsafeAllowHTTP
	// host: "api.example.com:8443" has a port, and host means https on port 443: write origin: "https://api.example.com:8443"
}
