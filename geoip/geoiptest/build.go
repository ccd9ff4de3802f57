package geoiptest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Build returns a database of type dbType ("…-Country", "…-ASN") with one record per network
// (CIDR → record). Reserved networks (loopback, documentation ranges) may be given.
func Build(dbType string, records map[string]mmdbtype.Map) ([]byte, error) {
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, Description: map[string]string{"en": "edge test database"},
		IncludeReservedNetworks: true, RecordSize: 28})
	if err != nil {
		return nil, err
	}
	for cidr, rec := range records {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			return nil, err
		}
		if err := tree.Insert(n, rec); err != nil {
			return nil, fmt.Errorf("%s: %w", cidr, err)
		}
	}
	var buf bytes.Buffer
	if _, err := tree.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write builds the database and writes it to path atomically (a rename), as a database updater
// does, creating the directory.
func Write(path, dbType string, records map[string]mmdbtype.Map) error {
	data, err := Build(dbType, records)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// Country is a country database record.
func Country(code string) mmdbtype.Map {
	return mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(code)}}
}

// ASN is an ASN database record; org "" names it "AS<n>".
func ASN(n uint32, org string) mmdbtype.Map {
	if org == "" {
		org = "AS" + strconv.FormatUint(uint64(n), 10)
	}
	return mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(n), "autonomous_system_organization": mmdbtype.String(org)}
}
