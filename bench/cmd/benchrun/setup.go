package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"edge/tls"
)

// Fixed addresses of the bench. Every arm listens on loopback only.
const (
	originAddr = "127.0.0.1:19000"
	cipher13   = "TLS_AES_128_GCM_SHA256"
)

// bodies maps the origin paths to their sizes: 56 B, 1 KiB, 64 KiB.
var bodies = []struct {
	path string
	size int
}{{"/56", 56}, {"/1k", 1024}, {"/64k", 64 << 10}}

// postBytes is the size of the form POSTed in the post cell (4 KiB).
const postBytes = 4 << 10

// writeCert writes one self-signed ECDSA P-256 certificate for localhost,
// 127.0.0.1 and ::1, valid for 30 days (cert.pem, key.pem, and both in
// combined.pem for HAProxy), from edge's own generator.
func writeCert(dir string) error {
	c, k, err := tls.GenerateSelfSigned([]string{"localhost"}, time.Now(), 30*24*time.Hour)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"cert.pem": c, "key.pem": k, "combined.pem": append(append([]byte{}, c...), k...)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writeBodies writes the origin's fixed response bodies and the POST form.
func writeBodies(dir string) error {
	www := filepath.Join(dir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return err
	}
	for _, b := range bodies {
		data := []byte(strings.Repeat("0123456789abcdef", b.size/16+1)[:b.size])
		if err := os.WriteFile(filepath.Join(www, b.path[1:]), data, 0o644); err != nil {
			return err
		}
	}
	form := []byte("a=" + strings.Repeat("x", postBytes-2))
	return os.WriteFile(filepath.Join(dir, "form.txt"), form, 0o644)
}

// originConf is the shared origin: nginx, one process, bodies from tmpfs with
// an open-file cache, and a location that accepts (and discards) the POST.
func originConf(dir string) string {
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/origin.pid;
error_log %[1]s/origin-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  client_body_buffer_size 64k;
  client_body_temp_path %[1]s/tmp-origin;
  proxy_temp_path %[1]s/tmp-origin; fastcgi_temp_path %[1]s/tmp-origin; uwsgi_temp_path %[1]s/tmp-origin; scgi_temp_path %[1]s/tmp-origin;
  open_file_cache max=16 inactive=600s;
  default_type application/octet-stream;
  sendfile on;
  server {
    listen %[2]s backlog=4096;
    root %[1]s/www;
    location = /post { return 200 "ok\n"; }
    location = / { return 200 "ok\n"; }
  }
}
`, dir, originAddr)
}

// haproxyConf: one thread, HTTP keep-alive both sides with connection reuse.
func haproxyConf(dir string, a *arm) string {
	return fmt.Sprintf(`global
  nbthread 1
  maxconn 4000
  ssl-default-bind-ciphersuites %[4]s
  ssl-default-bind-options ssl-min-ver TLSv1.3
defaults
  mode http
  timeout connect 5s
  timeout client 120s
  timeout server 120s
  timeout http-keep-alive 120s
  http-reuse always
frontend fe
  bind %[2]s
  bind %[3]s ssl crt %[1]s/combined.pem alpn h2,http/1.1 curves X25519 ciphersuites %[4]s ssl-min-ver TLSv1.3
  default_backend be
backend be
  server origin %[5]s
`, dir, a.http, a.https, cipher13, originAddr)
}

// nginxConf: one process (master_process off so the PID is the worker),
// upstream keep-alive, buffers large enough that 64 KiB never touches disk.
func nginxConf(dir string, a *arm) string {
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log error;
events { worker_connections 8192; }
http {
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  client_body_buffer_size 64k;
  client_body_temp_path %[1]s/tmp-nginx;
  proxy_temp_path %[1]s/tmp-nginx; fastcgi_temp_path %[1]s/tmp-nginx; uwsgi_temp_path %[1]s/tmp-nginx; scgi_temp_path %[1]s/tmp-nginx;
  http2_max_requests 10000000;
  upstream origin { server %[4]s; keepalive 64; keepalive_requests 10000000; }
  server {
    listen %[2]s;
    listen %[3]s ssl http2;
    ssl_certificate %[1]s/cert.pem;
    ssl_certificate_key %[1]s/key.pem;
    ssl_protocols TLSv1.3;
    ssl_ecdh_curve X25519;
    ssl_conf_command Ciphersuites %[5]s;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffer_size 16k;
      proxy_buffers 8 16k;
    }
  }
}
`, dir, a.http, a.https, originAddr, cipher13)
}

// caddyConf: Caddy's TLS 1.3 cipher suites cannot be chosen (crypto/tls);
// Go picks TLS_AES_128_GCM_SHA256 on AES-NI hardware, as edge does.
func caddyConf(dir string, a *arm) string {
	return fmt.Sprintf(`{
	admin off
	auto_https off
	storage file_system %[1]s/caddy-data
	servers {
		protocols h1 h2 h3
	}
}
https://%[3]s {
	bind 127.0.0.1
	tls %[1]s/cert.pem %[1]s/key.pem {
		protocols tls1.3
		curves x25519
	}
	reverse_proxy %[4]s
}
http://%[2]s {
	bind 127.0.0.1
	reverse_proxy %[4]s
}
`, dir, a.http, a.https, originAddr)
}
