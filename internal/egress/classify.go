package egress

import (
	"net/netip"
)

// Class is the kind of network an IP address belongs to, as far as egress is
// concerned. Every class except ClassPublic is denied unless the address is
// inside Policy.UnsafeAllowAddresses.
//
// The String form ("loopback", "private", …) appears in audit records and,
// through describe, in the reasons the guest sees; treat it as API.
type Class uint8

// The classes, in the order ClassifyIP tests them (the first match wins).
const (
	ClassInvalid       Class = iota // the zero netip.Addr; never dialled
	ClassPublic                     // globally routable unicast: the only allowed class
	ClassUnspecified                // 0.0.0.0, ::
	ClassThisNetwork                // 0.0.0.0/8 (RFC 791 "this network")
	ClassLoopback                   // 127.0.0.0/8, ::1
	ClassPrivate                    // RFC 1918; IPv6 local-use NAT64 64:ff9b:1::/48
	ClassSharedAddress              // 100.64.0.0/10 carrier-grade NAT (RFC 6598)
	ClassLinkLocal                  // 169.254.0.0/16, fe80::/10
	ClassMetadata                   // cloud instance metadata endpoints (see metadataAddrs)
	ClassBroadcast                  // 255.255.255.255
	ClassMulticast                  // 224.0.0.0/4, ff00::/8
	ClassReserved                   // 240.0.0.0/4, IETF assignments, IPv6 outside 2000::/3, deprecated forms
	ClassDocumentation              // TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20
	ClassBenchmarking               // 198.18.0.0/15, 2001:2::/48
	ClassUniqueLocal                // fc00::/7
	ClassSiteLocal                  // fec0::/10 (deprecated, still routed by some stacks)
	numClasses
)

var classNames = [numClasses]string{
	ClassInvalid:       "invalid",
	ClassPublic:        "public",
	ClassUnspecified:   "unspecified",
	ClassThisNetwork:   "this-network",
	ClassLoopback:      "loopback",
	ClassPrivate:       "private",
	ClassSharedAddress: "shared-address",
	ClassLinkLocal:     "link-local",
	ClassMetadata:      "metadata",
	ClassBroadcast:     "broadcast",
	ClassMulticast:     "multicast",
	ClassReserved:      "reserved",
	ClassDocumentation: "documentation",
	ClassBenchmarking:  "benchmarking",
	ClassUniqueLocal:   "unique-local",
	ClassSiteLocal:     "site-local",
}

// phrases complete "address X is …" in the reasons the guest sees.
var classPhrases = [numClasses]string{
	ClassInvalid:       "not a valid IP address",
	ClassPublic:        "public",
	ClassUnspecified:   "unspecified",
	ClassThisNetwork:   "in 0.0.0.0/8 (this network)",
	ClassLoopback:      "loopback",
	ClassPrivate:       "private",
	ClassSharedAddress: "carrier-grade NAT (100.64.0.0/10)",
	ClassLinkLocal:     "link-local",
	ClassMetadata:      "a cloud metadata endpoint",
	ClassBroadcast:     "broadcast",
	ClassMulticast:     "multicast",
	ClassReserved:      "reserved",
	ClassDocumentation: "reserved for documentation",
	ClassBenchmarking:  "reserved for benchmarking",
	ClassUniqueLocal:   "unique-local",
	ClassSiteLocal:     "site-local",
}

// String returns the class name used in audit records, such as "loopback".
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "invalid"
}

func (c Class) describe() string {
	if c < numClasses {
		return classPhrases[c]
	}
	return classPhrases[ClassInvalid]
}

// Prefix tables: read-only after package initialisation (arrays of values,
// never handed out), so they are constants in all but name.
var (
	// metadataAddrs are instance-metadata and host-agent endpoints of the major
	// clouds. Most sit in ranges denied anyway; 168.63.129.16 (Azure
	// WireServer) is a public address and is denied only because it is here.
	metadataAddrs = [...]netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
		netip.MustParseAddr("168.63.129.16"),   // Azure WireServer
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	}

	v4Table = [...]struct {
		p netip.Prefix
		c Class
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), ClassThisNetwork},
		{netip.MustParsePrefix("10.0.0.0/8"), ClassPrivate},
		{netip.MustParsePrefix("100.64.0.0/10"), ClassSharedAddress},
		{netip.MustParsePrefix("127.0.0.0/8"), ClassLoopback},
		{netip.MustParsePrefix("169.254.0.0/16"), ClassLinkLocal},
		{netip.MustParsePrefix("172.16.0.0/12"), ClassPrivate},
		{netip.MustParsePrefix("192.0.0.0/24"), ClassReserved}, // IETF protocol assignments
		{netip.MustParsePrefix("192.0.2.0/24"), ClassDocumentation},
		{netip.MustParsePrefix("192.88.99.0/24"), ClassReserved}, // deprecated 6to4 relay anycast
		{netip.MustParsePrefix("192.168.0.0/16"), ClassPrivate},
		{netip.MustParsePrefix("198.18.0.0/15"), ClassBenchmarking},
		{netip.MustParsePrefix("198.51.100.0/24"), ClassDocumentation},
		{netip.MustParsePrefix("203.0.113.0/24"), ClassDocumentation},
		{netip.MustParsePrefix("224.0.0.0/4"), ClassMulticast},
		{netip.MustParsePrefix("240.0.0.0/4"), ClassReserved},
	}

	v6Table = [...]struct {
		p netip.Prefix
		c Class
	}{
		{netip.MustParsePrefix("64:ff9b:1::/48"), ClassPrivate}, // local-use NAT64 (RFC 8215)
		{netip.MustParsePrefix("100::/64"), ClassReserved},      // discard-only (RFC 6666)
		{netip.MustParsePrefix("2001:2::/48"), ClassBenchmarking},
		{netip.MustParsePrefix("2001:db8::/32"), ClassDocumentation},
		{netip.MustParsePrefix("2001::/23"), ClassReserved}, // IETF protocol assignments (Teredo is handled before)
		{netip.MustParsePrefix("3fff::/20"), ClassDocumentation},
		{netip.MustParsePrefix("fc00::/7"), ClassUniqueLocal},
		{netip.MustParsePrefix("fe80::/10"), ClassLinkLocal},
		{netip.MustParsePrefix("fec0::/10"), ClassSiteLocal},
		{netip.MustParsePrefix("ff00::/8"), ClassMulticast},
	}

	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 well-known prefix
	sixToFour    = netip.MustParsePrefix("2002::/16")    // RFC 3056
	teredoPrefix = netip.MustParsePrefix("2001::/32")    // RFC 4380
	compatPrefix = netip.MustParsePrefix("::/96")        // deprecated IPv4-compatible (RFC 4291 2.5.5.1)
	globalV6     = netip.MustParsePrefix("2000::/3")     // the only allocated global unicast space
	broadcastV4  = netip.AddrFrom4([4]byte{255, 255, 255, 255})
)

// ClassifyIP reports the class of addr and whether egress denies it by
// default (denied is true for every class but ClassPublic).
//
//	class, denied := egress.ClassifyIP(netip.MustParseAddr("::ffff:10.0.0.1"))
//	// class == ClassPrivate, denied == true
//
// Forms that embed an IPv4 address are judged by the IPv4 address they
// embed: IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4
// 2002:AABB:CCDD::/48 and Teredo 2001:0::/32 (server and de-obfuscated
// client; denied if either is). The deprecated IPv4-compatible form
// ::a.b.c.d is denied by the embedded address if that is denied, and as
// ClassReserved otherwise. A zone (fe80::1%eth0) is ignored.
//
// Notes: ClassifyIP is pure and safe for concurrent use. It knows nothing of
// Policy.UnsafeAllowAddresses; the proxy applies that exception itself.
func ClassifyIP(addr netip.Addr) (class Class, denied bool) {
	class, _ = classify(addr)
	return class, class != ClassPublic
}

// classify is ClassifyIP that also returns the embedded IPv4 address the
// verdict was based on, when there is one (for the guest-facing reason).
func classify(addr netip.Addr) (Class, netip.Addr) {
	if !addr.IsValid() {
		return ClassInvalid, netip.Addr{}
	}
	addr = addr.WithZone("")
	if addr.Is4() {
		return classify4(addr), netip.Addr{}
	}
	if addr.Is4In6() {
		v4 := addr.Unmap()
		return classify4(v4), v4
	}
	for _, m := range metadataAddrs {
		if addr == m {
			return ClassMetadata, netip.Addr{}
		}
	}
	switch {
	case addr == netip.IPv6Unspecified():
		return ClassUnspecified, netip.Addr{}
	case addr == netip.IPv6Loopback():
		return ClassLoopback, netip.Addr{}
	case compatPrefix.Contains(addr):
		v4 := embedded4(addr, 12)
		if c := classify4(v4); c != ClassPublic {
			return c, v4
		}
		return ClassReserved, netip.Addr{}
	case nat64Prefix.Contains(addr):
		v4 := embedded4(addr, 12)
		return classify4(v4), v4
	case sixToFour.Contains(addr):
		v4 := embedded4(addr, 2)
		return classify4(v4), v4
	case teredoPrefix.Contains(addr):
		server := embedded4(addr, 4)
		b := addr.As16()
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		if c := classify4(client); c != ClassPublic {
			return c, client
		}
		if c := classify4(server); c != ClassPublic {
			return c, server
		}
		return ClassPublic, netip.Addr{}
	}
	for _, e := range v6Table {
		if e.p.Contains(addr) {
			return e.c, netip.Addr{}
		}
	}
	if !globalV6.Contains(addr) {
		return ClassReserved, netip.Addr{}
	}
	return ClassPublic, netip.Addr{}
}

func classify4(addr netip.Addr) Class {
	switch {
	case addr == netip.IPv4Unspecified():
		return ClassUnspecified
	case addr == broadcastV4:
		return ClassBroadcast
	}
	for _, m := range metadataAddrs {
		if addr == m {
			return ClassMetadata
		}
	}
	for _, e := range v4Table {
		if e.p.Contains(addr) {
			return e.c
		}
	}
	return ClassPublic
}

// embedded4 returns the IPv4 address stored in bytes [off, off+4) of addr.
func embedded4(addr netip.Addr, off int) netip.Addr {
	b := addr.As16()
	return netip.AddrFrom4([4]byte{b[off], b[off+1], b[off+2], b[off+3]})
}
