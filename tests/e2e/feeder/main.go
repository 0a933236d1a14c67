// bloombird-feeder: streams a routing table into a running gobgpd through
// its gRPC API (AddPathStream, closed with CloseAndRecv so that the call
// returns only once the server has taken every path), then prints how many
// prefixes it sent per family.
//
// Input lines: "prefix/len[<TAB>next_hop[<TAB>as path]]"; with -withdraw the
// prefixes are withdrawn instead. With -ops every line starts with an
// operation, "A<TAB>" (announce, fields as above) or "W<TAB>" (withdraw), so
// an update trace is replayed in order. Blank lines and lines starting with
// # are skipped. Without an AS path the path is empty (the feeder's own AS
// is still prepended on eBGP sessions).
//
// Part of bloombird, GPL-2.0-or-later.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/osrg/gobgp/v3/pkg/apiutil"
	"github.com/osrg/gobgp/v3/pkg/packet/bgp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	addr := flag.String("api", "127.0.0.1:50051", "gobgpd gRPC address")
	nh4 := flag.String("nh4", "", "IPv4 next hop (default: the line's, else 0.0.0.0 = gobgpd's own)")
	nh6 := flag.String("nh6", "", "IPv6 next hop (default: the line's if IPv6, else ::)")
	withdraw := flag.Bool("withdraw", false, "withdraw the prefixes instead of announcing them")
	ops := flag.Bool("ops", false, "lines start with A (announce) or W (withdraw)")
	batch := flag.Int("batch", 2000, "paths per stream message")
	flag.Parse()

	conn, err := grpc.Dial(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail("connect %s: %v", *addr, err)
	}
	defer conn.Close()
	client := api.NewGobgpApiClient(conn)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	stream, err := client.AddPathStream(ctx)
	if err != nil {
		fail("AddPathStream: %v", err)
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	var paths []*api.Path
	n4, n6, nw, lineno := 0, 0, 0, 0
	flush := func() {
		if len(paths) == 0 {
			return
		}
		if err := stream.Send(&api.AddPathStreamRequest{TableType: api.TableType_GLOBAL, Paths: paths}); err != nil {
			fail("send: %v", err)
		}
		paths = paths[:0]
	}

	for in.Scan() {
		lineno++
		line := strings.TrimSpace(in.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		wd := *withdraw
		if *ops {
			if len(f) < 2 || (f[0] != "A" && f[0] != "W") {
				fail("line %d: expected A or W and a prefix", lineno)
			}
			wd = f[0] == "W"
			f = f[1:]
		}
		_, pfx, err := net.ParseCIDR(f[0])
		if err != nil {
			fail("line %d: bad prefix %q", lineno, f[0])
		}
		plen, _ := pfx.Mask.Size()
		v4 := pfx.IP.To4() != nil

		attrs := []bgp.PathAttributeInterface{bgp.NewPathAttributeOrigin(0)}
		var asns []uint32
		if len(f) > 2 {
			for _, a := range strings.Fields(f[2]) {
				if v, err := strconv.ParseUint(strings.Trim(a, "{}"), 10, 32); err == nil {
					asns = append(asns, uint32(v))
				}
			}
		}
		segs := []bgp.AsPathParamInterface{}
		if len(asns) > 0 {
			segs = append(segs, bgp.NewAs4PathParam(bgp.BGP_ASPATH_ATTR_TYPE_SEQ, asns))
		}
		attrs = append(attrs, bgp.NewPathAttributeAsPath(segs))

		var nlri bgp.AddrPrefixInterface
		if v4 {
			nh := *nh4
			if nh == "" && len(f) > 1 && net.ParseIP(f[1]).To4() != nil {
				nh = f[1]
			}
			if nh == "" {
				nh = "0.0.0.0"
			}
			nlri = bgp.NewIPAddrPrefix(uint8(plen), pfx.IP.String())
			attrs = append(attrs, bgp.NewPathAttributeNextHop(nh))
			n4++
		} else {
			nh := *nh6
			if nh == "" && len(f) > 1 && net.ParseIP(f[1]) != nil && net.ParseIP(f[1]).To4() == nil {
				nh = f[1]
			}
			if nh == "" {
				nh = "::"
			}
			nlri = bgp.NewIPv6AddrPrefix(uint8(plen), pfx.IP.String())
			attrs = append(attrs, bgp.NewPathAttributeMpReachNLRI(nh, []bgp.AddrPrefixInterface{nlri}))
			n6++
		}

		if wd {
			nw++
		}
		p, err := apiutil.NewPath(nlri, wd, attrs, time.Now())
		if err != nil {
			fail("line %d: %v", lineno, err)
		}
		paths = append(paths, p)
		if len(paths) >= *batch {
			flush()
		}
	}
	if err := in.Err(); err != nil {
		fail("read: %v", err)
	}
	flush()

	// Returns after the server has processed the whole stream.
	if _, err := stream.CloseAndRecv(); err != nil {
		fail("close: %v", err)
	}
	fmt.Printf("sent ipv4 %d ipv6 %d (withdrawals %d)\n", n4, n6, nw)
}

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "bloombird-feeder: "+format+"\n", a...)
	os.Exit(1)
}
