"""Serving certificates: files reloaded when they change on disk (cert-manager renews them in
place), or a self-signed pair made at start-up for development."""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import ssl
import tempfile
import threading
from contextlib import contextmanager


def self_signed(folder: str, names: list[str]) -> tuple[str, str]:
    """(certificate path, key path) of a new self-signed pair valid for `names` (DNS names or
    IP addresses) for a year; the certificate is its own CA (the caBundle to register)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "draguard-webhook")])
    alternatives: list[x509.GeneralName] = []
    for name in names:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternatives.append(x509.DNSName(name))
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    _write_private(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    return cert_path, key_path


def _write_private(path: str, data: bytes) -> None:
    """Write a private key readable by its owner alone from the moment it exists (created 0600,
    whatever the umask), and whole or not at all (a temporary file renamed over `path`)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


@contextmanager
def temporary_folder():
    """A folder only its owner can read (mkdtemp: 0700) for the self-signed pair, removed with
    the key in it when the block ends: at shutdown, SIGTERM included (the server returns)."""
    folder = tempfile.mkdtemp(prefix="draguard-webhook-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class ReloadingContext:
    """The TLS context of the serving pair, loaded again when either file changes (checked at
    each new connection: a stat, no polling thread). A pair that fails to load keeps the last
    good one serving, and says so once."""

    def __init__(self, cert: str, key: str, log):
        self.cert, self.key, self.log = cert, key, log
        self._stamp = None
        self._lock = threading.Lock()
        self.context = self._load()

    def _mtimes(self):
        return os.stat(self.cert).st_mtime_ns, os.stat(self.key).st_mtime_ns

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        stamp = self._mtimes()
        context.load_cert_chain(self.cert, self.key)
        self._stamp = stamp
        return context

    def current(self) -> ssl.SSLContext:
        try:
            changed = self._mtimes() != self._stamp
        except OSError:
            return self.context
        if changed:
            with self._lock:
                try:
                    self.context = self._load()
                    self.log("certificate reloaded", cert=self.cert)
                except (OSError, ssl.SSLError) as exc:
                    self._stamp = self._mtimes()
                    self.log("certificate reload failed: serving the previous one", error=str(exc))
        return self.context
