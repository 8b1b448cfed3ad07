package egress

import (
	"net/netip"
	"testing"
)

func TestClassifyIP(t *testing.T) {
	tests := []struct {
		name string
		addr string // "" for the zero Addr
		want Class
	}{
		{"zero value", "", ClassInvalid},
		{"public v4", "8.8.8.8", ClassPublic},
		{"public v4 edge of 172.16/12", "172.32.0.1", ClassPublic},
		{"public v4 edge of 100.64/10", "100.128.0.1", ClassPublic},
		{"public v6", "2606:4700:4700::1111", ClassPublic},
		{"unspecified v4", "0.0.0.0", ClassUnspecified},
		{"this network", "0.255.0.1", ClassThisNetwork},
		{"loopback", "127.0.0.1", ClassLoopback},
		{"loopback range", "127.255.255.254", ClassLoopback},
		{"rfc1918 10", "10.255.255.255", ClassPrivate},
		{"rfc1918 172", "172.31.0.1", ClassPrivate},
		{"rfc1918 192", "192.168.0.1", ClassPrivate},
		{"cgnat", "100.64.0.0", ClassSharedAddress},
		{"cgnat top", "100.127.255.255", ClassSharedAddress},
		{"link-local", "169.254.0.1", ClassLinkLocal},
		{"metadata", "169.254.169.254", ClassMetadata},
		{"metadata ecs", "169.254.170.2", ClassMetadata},
		{"metadata azure (public range)", "168.63.129.16", ClassMetadata},
		{"metadata alibaba", "100.100.100.200", ClassMetadata},
		{"ietf assignments", "192.0.0.8", ClassReserved},
		{"documentation", "198.51.100.7", ClassDocumentation},
		{"benchmarking", "198.19.0.1", ClassBenchmarking},
		{"6to4 relay anycast", "192.88.99.1", ClassReserved},
		{"multicast", "239.255.255.250", ClassMulticast},
		{"reserved", "250.1.2.3", ClassReserved},
		{"broadcast", "255.255.255.255", ClassBroadcast},
		{"v6 unspecified", "::", ClassUnspecified},
		{"v6 loopback", "::1", ClassLoopback},
		{"v6 link-local", "fe80::1", ClassLinkLocal},
		{"v6 link-local with zone", "fe80::1%eth0", ClassLinkLocal},
		{"v6 site-local", "fec0::1", ClassSiteLocal},
		{"v6 unique-local", "fc00::1", ClassUniqueLocal},
		{"v6 metadata", "fd00:ec2::254", ClassMetadata},
		{"v6 multicast", "ff02::1", ClassMulticast},
		{"v6 documentation", "2001:db8::1", ClassDocumentation},
		{"v6 documentation 3fff", "3fff::1", ClassDocumentation},
		{"v6 benchmarking", "2001:2::1", ClassBenchmarking},
		{"v6 ietf", "2001:10::1", ClassReserved},
		{"v6 discard", "100::1", ClassReserved},
		{"v6 outside 2000::/3", "4000::1", ClassReserved},
		{"v6 global edge", "3ffe::1", ClassPublic},
		{"mapped loopback", "::ffff:127.0.0.1", ClassLoopback},
		{"mapped public", "::ffff:8.8.8.8", ClassPublic},
		{"mapped metadata", "::ffff:169.254.169.254", ClassMetadata},
		{"compat loopback", "::127.0.0.1", ClassLoopback},
		{"compat private", "::192.168.1.1", ClassPrivate},
		{"compat public is still reserved", "::8.8.8.8", ClassReserved},
		{"nat64 public", "64:ff9b::8.8.8.8", ClassPublic},
		{"nat64 private", "64:ff9b::10.0.0.1", ClassPrivate},
		{"nat64 metadata", "64:ff9b::169.254.169.254", ClassMetadata},
		{"nat64 local-use", "64:ff9b:1::1", ClassPrivate},
		{"6to4 public", "2002:808:808::1", ClassPublic},
		{"6to4 loopback", "2002:7f00:1::1", ClassLoopback},
		{"6to4 cgnat", "2002:6440:1::", ClassSharedAddress},
		// Teredo: server 65.54.227.120, client bits inverted.
		{"teredo public client", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", ClassPublic},     // client 8.8.8.8
		{"teredo loopback client", "2001:0:4136:e378:8000:63bf:80ff:fffe", ClassLoopback}, // client 127.0.0.1
		{"teredo private server", "2001:0:a00:1:8000:63bf:f7f7:f7f7", ClassPrivate},       // server 10.0.0.1
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a netip.Addr
			if tt.addr != "" {
				a = netip.MustParseAddr(tt.addr)
			}
			got, denied := ClassifyIP(a)
			if got != tt.want || denied != (tt.want != ClassPublic) {
				t.Errorf("ClassifyIP(%s) = %s, %v; want %s", tt.addr, got, denied, tt.want)
			}
		})
	}
}

// FuzzClassifyIP checks ClassifyIP against invariants, with netip's own
// predicates as an independent oracle for the well-known ranges.
func FuzzClassifyIP(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "8.8.8.8", "169.254.169.254", "::1", "::ffff:10.0.0.1",
		"64:ff9b::a9fe:a9fe", "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe", "fe80::1%eth0", "2606:4700::1"} {
		f.Add([]byte(s))
	}
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var a netip.Addr
		switch len(b) {
		case 4:
			a = netip.AddrFrom4([4]byte(b))
		case 16:
			a = netip.AddrFrom16([16]byte(b))
		default:
			var err error
			if a, err = netip.ParseAddr(string(b)); err != nil {
				return
			}
		}
		class, denied := ClassifyIP(a)
		if denied != (class != ClassPublic) || class >= numClasses || class.String() == "" {
			t.Fatalf("ClassifyIP(%s) = %d (%s), %v: inconsistent", a, class, class, denied)
		}
		if c2, _ := ClassifyIP(a); c2 != class {
			t.Fatalf("ClassifyIP(%s) not deterministic", a)
		}
		if !a.IsValid() {
			return
		}
		if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() ||
			a.IsInterfaceLocalMulticast() || a.IsLinkLocalMulticast() {
			if !denied {
				t.Fatalf("ClassifyIP(%s) allows an address netip calls non-global", a)
			}
		}
		if a.Is4In6() {
			if c4, _ := ClassifyIP(a.Unmap()); c4 != class {
				t.Fatalf("ClassifyIP(%s) = %s but its IPv4 %s is %s", a, class, a.Unmap(), c4)
			}
		}
		if a.Is6() && !a.Is4In6() {
			a := a.WithZone("") // netip.Prefix.Contains is false for zoned addresses
			if cz, _ := ClassifyIP(a.WithZone("eth0")); cz != class {
				t.Fatalf("zone changed the class of %s", a)
			}
			// An address embedding a denied IPv4 is denied.
			for _, e := range []struct {
				p   netip.Prefix
				off int
			}{{nat64Prefix, 12}, {sixToFour, 2}, {compatPrefix, 12}} {
				if e.p.Contains(a) {
					if _, d4 := ClassifyIP(embedded4(a, e.off)); d4 && !denied {
						t.Fatalf("ClassifyIP(%s) allows an address embedding denied %s", a, embedded4(a, e.off))
					}
				}
			}
			if !denied && !globalV6.Contains(a) && !nat64Prefix.Contains(a) {
				t.Fatalf("ClassifyIP(%s) allows an address outside 2000::/3", a)
			}
		}
	})
}
