package e2e_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// chromiumDOM loads url in headless Chromium, trusting edge's self-signed certificate by its key,
// and returns the DOM after the page's scripts ran.
func chromiumDOM(t *testing.T, browser string, e *testEdge, url string, flags ...string) *html.Node {
	t.Helper()
	flags = append([]string{"--virtual-time-budget=3000", servedSPKIFlag(t, e.Addr("https").String())}, flags...)
	doc, err := html.Parse(bytes.NewReader(runChromium(t, browser, url, flags...)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// chromiumPage is an HTML page of about 35 KiB whose script writes, once it has loaded, the
// encoded and decoded sizes the browser saw for it (Navigation Timing) into #sizes and the number
// of rows it rendered into #rows.
func chromiumPage() []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>through edge</title></head><body>\n")
	for i := range 400 {
		fmt.Fprintf(&b, "<p class=\"row\">row %d of a page a browser loads through edge, compressed on the way</p>\n", i)
	}
	b.WriteString(`<p id="sizes">no script ran</p><p id="rows"></p>
<script>
// The sizes are final once the whole response has arrived: read them at the load event.
addEventListener("load", () => {
  const nav = performance.getEntriesByType("navigation")[0];
  document.getElementById("sizes").textContent = nav.encodedBodySize + " " + nav.decodedBodySize;
  document.getElementById("rows").textContent = document.querySelectorAll("p.row").length;
});
</script></body></html>
`)
	return b.Bytes()
}

// TestChromiumBrowserFacing: a real browser loads a page through edge over HTTP/2 and HTTP/3,
// compressed with zstd and with brotli, and renders it decoded; and renders edge's HTML error
// page, naming the request id, for a request the WAF blocks.
func TestChromiumBrowserFacing(t *testing.T) {
	browser := findChromium(t)
	page := chromiumPage()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.Write(page)
	}))
	defer origin.Close()
	for _, coding := range []string{"zstd", "br"} {
		e := startEdge(t, fmt.Sprintf(`
[compression]
algorithms = [%q]
[backends.o]
servers = [{ address = %q }]
[[routes]]
name = "o"
backend = "o"
`, coding, origin.Listener.Addr().String()))
		addr := e.Addr("https").String()
		for _, proto := range []struct {
			name  string
			flags []string
		}{
			{"h2", []string{"--disable-quic"}},
			{"h3", []string{"--enable-quic", "--origin-to-force-quic-on=" + addr}},
		} {
			t.Run(coding+"/"+proto.name, func(t *testing.T) {
				d := htmlDoc{chromiumDOM(t, browser, e, "https://"+addr+"/page.html", proto.flags...)}
				if got := d.text("rows"); got != "400" {
					t.Fatalf("the page rendered %q rows, want 400 (not decoded?)", got)
				}
				sizes := strings.Fields(d.text("sizes"))
				if len(sizes) != 2 {
					t.Fatalf("sizes %q", d.text("sizes"))
				}
				enc, _ := strconv.Atoi(sizes[0])
				dec, _ := strconv.Atoi(sizes[1])
				if dec != len(page) || enc <= 0 || enc*4 > dec {
					t.Errorf("Chromium saw %d encoded bytes for %d decoded, want the page (%d bytes) compressed at least fourfold", enc, dec, len(page))
				}
				// The access log names the coding and the protocol the browser used.
				if !eventually(func() bool {
					for _, line := range strings.Split(e.access.String(), "\n") {
						if strings.Contains(line, `"path":"/page.html"`) && strings.Contains(line, `"protocol":"`+proto.name+`"`) &&
							strings.Contains(line, `"content_encoding":"`+coding+`"`) {
							return true
						}
					}
					return false
				}) {
					t.Errorf("no %s access log line with content_encoding %s for the page:\n%s", proto.name, coding, e.access.String())
				}
			})
		}
	}

	e := startEdge(t, echoRoute)
	t.Run("error page", func(t *testing.T) {
		d := htmlDoc{chromiumDOM(t, browser, e, "https://"+e.Addr("https").String()+"/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", "--disable-quic")}
		if got := d.text("status"); got != "403 Forbidden" {
			t.Errorf("heading %q, want 403 Forbidden", got)
		}
		rid := d.text("request-id")
		if len(rid) < 16 || !strings.Contains(e.access.String(), `"request_id":"`+rid+`"`) {
			t.Errorf("the page names request id %q, which the access log does not have", rid)
		}
		if !strings.Contains(d.text("rules"), "SQLI-") {
			t.Errorf("rules %q", d.text("rules"))
		}
	})
}
