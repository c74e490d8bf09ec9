package tlsutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// Validity, as Nomad's tls commands: five years for a CA, one for an
// agent's or the CLI's certificate.
const (
	DefaultCADays   = 1825
	DefaultCertDays = 365
)

// Nomad's file names: nomad-agent-ca.pem, nomad-agent-ca-key.pem,
// global-server-nomad.pem, global-server-nomad-key.pem, and so on.
const (
	CAFileName    = Domain + "-agent-ca.pem"
	CAKeyFileName = Domain + "-agent-ca-key.pem"
)

// CertFileNames returns the certificate and key file names for role in
// region: "global-server-nomad.pem", "global-server-nomad-key.pem".
func CertFileNames(role, region string) (cert, key string) {
	base := region + "-" + role + "-" + Domain
	return base + ".pem", base + "-key.pem"
}

// ErrRole: a certificate was asked for a role other than server, client
// or cli.
var ErrRole = errors.New("role must be server, client or cli")

// CAOptions configure GenerateCA.
type CAOptions struct {
	// CommonName of the CA; "Nomad Agent CA <serial>" when empty, as
	// Nomad's.
	CommonName string
	// Days of validity; DefaultCADays when 0.
	Days int
	// Now is the start of validity (less a minute for clocks that lag);
	// time.Now when zero.
	Now time.Time
	// Subject's other fields, as Nomad's tls ca create flags; Organization
	// is "Drover" when empty.
	Country, Locality, Organization, OrganizationalUnit, PostalCode, Province, StreetAddress string
	// NameConstraint limits the names the CA may sign to Domain ("nomad"
	// when empty), localhost and AdditionalDomains (Nomad's
	// -name-constraint).
	NameConstraint    bool
	Domain            string
	AdditionalDomains []string
}

// subject is the CA's subject.
func (o CAOptions) subject(cn string) pkix.Name {
	n := pkix.Name{CommonName: cn, Organization: []string{"Drover"}}
	one := func(v string) []string {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	if o.Organization != "" {
		n.Organization = one(o.Organization)
	}
	n.Country, n.Locality, n.OrganizationalUnit = one(o.Country), one(o.Locality), one(o.OrganizationalUnit)
	n.PostalCode, n.Province, n.StreetAddress = one(o.PostalCode), one(o.Province), one(o.StreetAddress)
	return n
}

// GenerateCA returns a new self-signed CA certificate and its ECDSA P-256
// private key, both PEM.
func GenerateCA(o CAOptions) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	cn := o.CommonName
	if cn == "" {
		cn = "Nomad Agent CA " + serial.String()
	}
	skid, err := keyID(key.Public())
	if err != nil {
		return nil, nil, err
	}
	start := now(o.Now)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               o.subject(cn),
		NotBefore:             start,
		NotAfter:              start.AddDate(0, 0, orDays(o.Days, DefaultCADays)),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		SubjectKeyId:          skid,
		AuthorityKeyId:        skid,
	}
	if o.NameConstraint {
		domain := o.Domain
		if domain == "" {
			domain = "nomad"
		}
		tmpl.PermittedDNSDomainsCritical = true
		tmpl.PermittedDNSDomains = append([]string{domain, "localhost"}, o.AdditionalDomains...)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	return encode(der, key)
}

// CertOptions configure GenerateCert.
type CertOptions struct {
	// Role is RoleServer, RoleClient or RoleCLI.
	Role string
	// Region the certificate serves; "global" when empty.
	Region string
	// Days of validity; DefaultCertDays when 0.
	Days int
	// DNSNames and IPs are added to the role name, "localhost" and (but
	// for the CLI) 127.0.0.1.
	DNSNames []string
	IPs      []net.IP
	// CACert and CAKey are the signing CA, PEM.
	CACert, CAKey []byte
	// Now is the start of validity; time.Now when zero.
	Now time.Time
}

// GenerateCert returns a certificate for an agent or the CLI signed by the
// CA, and its ECDSA P-256 key, both PEM. It names role.region.nomad (also
// its common name) and localhost, and, but for the CLI, 127.0.0.1. Server
// and client certificates serve both ends of a connection (server and
// client authentication); the CLI's only calls.
func GenerateCert(o CertOptions) (certPEM, keyPEM []byte, err error) {
	if o.Role != RoleServer && o.Role != RoleClient && o.Role != RoleCLI {
		return nil, nil, fmt.Errorf("%w (got %q)", ErrRole, o.Role)
	}
	region := o.Region
	if region == "" {
		region = "global"
	}
	ca, caKey, err := parseCA(o.CACert, o.CAKey)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	skid, err := keyID(key.Public())
	if err != nil {
		return nil, nil, err
	}
	name := RoleName(o.Role, region)
	dns := []string{name, "localhost"}
	var ips []net.IP
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if o.Role == RoleCLI {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		ips = append(ips, net.IPv4(127, 0, 0, 1))
	}
	for _, d := range o.DNSNames {
		if !slices.Contains(dns, d) {
			dns = append(dns, d)
		}
	}
	for _, ip := range o.IPs {
		if !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	}
	start := now(o.Now)
	notAfter := start.AddDate(0, 0, orDays(o.Days, DefaultCertDays))
	if notAfter.After(ca.NotAfter) {
		return nil, nil, fmt.Errorf("the certificate would outlive its CA (valid until %s): give fewer -days", ca.NotAfter.Format(time.DateOnly))
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             start,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           usage,
		BasicConstraintsValid: true,
		DNSNames:              dns,
		IPAddresses:           ips,
		SubjectKeyId:          skid,
		AuthorityKeyId:        ca.SubjectKeyId,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	return encode(der, key)
}

// parseCA reads the CA certificate and its key.
func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, nil, fmt.Errorf("%w: the CA file holds no PEM certificate", ErrFile)
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the CA certificate: %w", ErrFile, err)
	}
	if !ca.IsCA {
		return nil, nil, fmt.Errorf("%w: the CA file's certificate is not a CA", ErrFile)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, nil, fmt.Errorf("%w: the CA key file holds no PEM key", ErrFile)
	}
	var key any
	switch kb.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(kb.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(kb.Bytes)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the CA key: %w", ErrFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the CA key cannot sign", ErrFile)
	}
	pub, ok := ca.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(signer.Public()) {
		return nil, nil, fmt.Errorf("%w: the CA key does not match the CA certificate", ErrFile)
	}
	return ca, signer, nil
}

func encode(der []byte, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}

// serialNumber is a random 128-bit serial, as RFC 5280 recommends.
func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// keyID is the SHA-256 of the public key's DER, truncated to 20 bytes.
func keyID(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return sum[:20], nil
}

func now(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.Add(-time.Minute).UTC().Truncate(time.Second)
}

func orDays(d, def int) int {
	if d <= 0 {
		return def
	}
	return d
}
