package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// pin carries the addresses checked for one request hop to the transport's
// DialContext, in the request's context. (The transport keeps context
// values when it dials, though not cancellation; hence deadline.)
type pin struct {
	hostport string       // "host:port" as the transport will ask for it
	addrs    []netip.Addr // every one checked; dialled in order
	port     uint16
	deadline time.Time
}

type pinKey struct{}

// dialPinned is the transport's DialContext. It dials only the addresses
// the request's pin lists, never a name, so no second DNS lookup can swap
// in another address (DNS rebinding). Without a matching pin it refuses.
func (r *Run) dialPinned(ctx context.Context, network, address string) (net.Conn, error) {
	p, _ := ctx.Value(pinKey{}).(*pin)
	if p == nil || p.hostport != address {
		return nil, fmt.Errorf("egress: refusing to dial %s: no checked address for it", address)
	}
	ctx, cancel := context.WithDeadline(ctx, p.deadline)
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel) // Run.Close stops dials too
	defer stop()
	var errs []error
	for _, a := range p.addrs {
		c, err := r.proxy.dial(ctx, network, netip.AddrPortFrom(a, p.port).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// resolve returns the addresses to dial for t, each checked against the
// rules, or the denial for the first one that is not allowed. Every
// address must pass: a name that resolves to one public and one private
// address is denied, since which one a client would use is up to it.
func (r *Run) resolve(ctx context.Context, t *target) ([]netip.Addr, *Error) {
	if t.ip.IsValid() {
		if e := r.rules.checkAddr("", t.ip); e != nil {
			return []netip.Addr{t.ip}, e
		}
		return []netip.Addr{t.ip}, nil
	}
	addrs, err := r.proxy.resolver.LookupNetIP(ctx, "ip", t.host)
	if err != nil {
		return nil, &Error{Kind: KindNetwork, Reason: fmt.Sprintf("could not resolve host %q", t.host), err: err}
	}
	if len(addrs) == 0 {
		return nil, networkf(nil, "could not resolve host %q: no addresses", t.host)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if e := r.rules.checkAddr(t.host, a); e != nil {
			return []netip.Addr{a}, e
		}
		out = append(out, a.Unmap()) // ::ffff:a.b.c.d is a.b.c.d on the wire
	}
	return out, nil
}
