package edge

// Blank imports that pin the modules the capability packages use while they are being written.
// Removed once every module is imported by real code.
import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/cloudflare/circl/sign/mldsa/mldsa65"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/quic-go/quic-go"
	_ "github.com/quic-go/quic-go/http3"
	_ "github.com/redis/go-redis/v9"
	_ "github.com/refraction-networking/utls"
	_ "golang.org/x/crypto/cryptobyte"
	_ "golang.org/x/net/http2"
	_ "golang.org/x/net/http2/h2c"
)
