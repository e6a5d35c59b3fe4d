//! The HTTPS server: rustls on a TCP listener, one task per connection,
//! every request answered by [`Webhooks::handle`].

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use super::Webhooks;
use super::http1::{Connection, Response};

/// Why the webhook server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The certificate or key could not be read or used.
    #[error("webhook TLS: {0}")]
    Tls(String),
    /// The address could not be bound.
    #[error("webhook server: {0}")]
    Io(#[from] io::Error),
}

/// The serving certificate and key of a webhook server.
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// From PEM: the certificate chain (serving certificate first, as in
    /// `tls.crt`) and its private key (PKCS#8, PKCS#1 or SEC1, as in
    /// `tls.key`). TLS 1.2 and 1.3 on ring; HTTP/1.1 is offered by ALPN.
    pub fn from_pem(cert_chain: &[u8], key: &[u8]) -> Result<Self, WebhookError> {
        let (certs, key) = parse_pem(cert_chain, key)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| WebhookError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| WebhookError::Tls(format!("the certificate and key: {e}")))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerTls { config: Arc::new(config) })
    }

    /// From PEM files (`tls.crt`, `tls.key`), as mounted from a Secret, and
    /// again whenever they change (as controller-runtime's certificate
    /// watcher does): the files are looked at, at most once a second, when
    /// a connection's handshake begins, and a renewed pair (cert-manager's
    /// rotation) serves the next connections. A pair that does not load
    /// (one file written, the other not yet) leaves the last one serving.
    pub fn from_pem_files(
        cert_chain: impl AsRef<std::path::Path>,
        key: impl AsRef<std::path::Path>,
    ) -> Result<Self, WebhookError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let files = PemFiles { cert: cert_chain.as_ref().to_owned(), key: key.as_ref().to_owned() };
        let (stamp, loaded) = files.load(&provider)?;
        let resolver = Reloading {
            files,
            provider: provider.clone(),
            current: Mutex::new(Current { key: Arc::new(loaded), stamp, checked: std::time::Instant::now() }),
        };
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| WebhookError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(resolver));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerTls { config: Arc::new(config) })
    }
}

/// The certificate chain's and key's files.
#[derive(Debug)]
struct PemFiles {
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
}

/// What tells a file's versions apart: its modification time and length.
type Stamp = [(Option<std::time::SystemTime>, u64); 2];

impl PemFiles {
    fn stamp(&self) -> Stamp {
        [&self.cert, &self.key].map(|p| std::fs::metadata(p).map_or((None, 0), |m| (m.modified().ok(), m.len())))
    }

    /// The pair as it is on disk now, with the stamp it was read at.
    fn load(
        &self,
        provider: &rustls::crypto::CryptoProvider,
    ) -> Result<(Stamp, rustls::sign::CertifiedKey), WebhookError> {
        let stamp = self.stamp();
        let read = |p: &std::path::Path| {
            std::fs::read(p).map_err(|e| WebhookError::Tls(format!("reading {}: {e}", p.display())))
        };
        let (certs, key) = parse_pem(&read(&self.cert)?, &read(&self.key)?)?;
        let loaded = rustls::sign::CertifiedKey::from_der(certs, key, provider)
            .map_err(|e| WebhookError::Tls(format!("the certificate and key: {e}")))?;
        Ok((stamp, loaded))
    }
}

#[derive(Debug)]
struct Current {
    key: Arc<rustls::sign::CertifiedKey>,
    stamp: Stamp,
    checked: std::time::Instant,
}

/// Serves the pair of [`PemFiles`] as it is on disk.
#[derive(Debug)]
struct Reloading {
    files: PemFiles,
    provider: Arc<rustls::crypto::CryptoProvider>,
    current: Mutex<Current>,
}

/// How often the files are looked at, at most.
const RELOAD_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

impl rustls::server::ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: rustls::server::ClientHello<'_>) -> Option<Arc<rustls::sign::CertifiedKey>> {
        let mut current = self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.checked.elapsed() >= RELOAD_CHECK {
            current.checked = std::time::Instant::now();
            if self.files.stamp() != current.stamp {
                match self.files.load(&self.provider) {
                    Ok((stamp, loaded)) => {
                        tracing::info!(cert = %self.files.cert.display(), "serving the renewed webhook certificate");
                        current.key = Arc::new(loaded);
                        current.stamp = stamp;
                    }
                    // Tried again at the next check; the stamp is kept.
                    Err(e) => tracing::warn!("the webhook certificate changed but does not load yet: {e}"),
                }
            }
        }
        Some(current.key.clone())
    }
}

/// The certificate chain and private key of PEM texts.
fn parse_pem(
    cert_chain: &[u8],
    key: &[u8],
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), WebhookError> {
    let certs = CertificateDer::pem_slice_iter(cert_chain)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| WebhookError::Tls(format!("reading the certificate chain: {e}")))?;
    if certs.is_empty() {
        return Err(WebhookError::Tls("no certificate in the certificate PEM".into()));
    }
    let key =
        PrivateKeyDer::from_pem_slice(key).map_err(|e| WebhookError::Tls(format!("reading the private key: {e}")))?;
    Ok((certs, key))
}

/// A running webhook server. It stops on [`shutdown`](Self::shutdown) or
/// when dropped (open connections are closed either way).
#[derive(Debug)]
pub struct WebhookServer {
    local_addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl WebhookServer {
    /// Binds `addr` and serves `webhooks` over HTTPS with `tls` on the
    /// current tokio runtime.
    pub async fn bind(addr: impl ToSocketAddrs, tls: ServerTls, webhooks: Webhooks) -> Result<Self, WebhookError> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, TlsAcceptor::from(tls.config), Arc::new(webhooks), stopped));
        Ok(WebhookServer { local_addr, stop, task: Some(task) })
    }

    /// The address it listens on (with the port the system chose for `:0`).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops listening, closes every connection and waits until it has.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The most connections served at once; the API server keeps a few open.
/// (Four in the unit tests, which fill it.)
pub(crate) const MAX_CONNECTIONS: usize = if cfg!(test) { 4 } else { 512 };

/// What the accept loop knows of the open connections: which of them wait
/// for a request and could be closed to make room for a new one. Without
/// this, connections that never send anything (a handshake left half-done,
/// a client gone without a FIN) would fill every slot and keep the API
/// server out.
#[derive(Default)]
struct Slots {
    open: Mutex<std::collections::HashMap<u64, Slot>>,
    /// A connection began to wait: room can be made again.
    idle: tokio::sync::Notify,
}

struct Slot {
    /// Since when the connection waits for a request, and whether it has
    /// answered one; `None` while a request is read, handled or answered.
    waits: Option<(bool, std::time::Instant)>,
    /// Told to close by [`Slots::make_room`].
    close: Arc<tokio::sync::Notify>,
}

impl Slots {
    /// A new connection, waiting for its handshake.
    fn open(&self, id: u64) -> Arc<tokio::sync::Notify> {
        let close = Arc::new(tokio::sync::Notify::new());
        let slot = Slot { waits: Some((false, std::time::Instant::now())), close: close.clone() };
        self.lock().insert(id, slot);
        close
    }

    /// Connection `id` waits for its next request.
    fn waits(&self, id: u64, answered: bool) {
        if let Some(slot) = self.lock().get_mut(&id) {
            slot.waits = Some((answered, std::time::Instant::now()));
        }
        self.idle.notify_one();
    }

    /// Connection `id` reads, handles or answers a request.
    fn busy(&self, id: u64) {
        if let Some(slot) = self.lock().get_mut(&id) {
            slot.waits = None;
        }
    }

    fn closed(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn any_waits(&self) -> bool {
        self.lock().values().any(|slot| slot.waits.is_some())
    }

    /// Tells the waiting connection to close that has answered nothing
    /// (still in its handshake, or silent since) for the longest, else the
    /// one idle the longest. False if every connection is busy.
    fn make_room(&self) -> bool {
        let mut open = self.lock();
        let Some(slot) = open.values_mut().filter(|slot| slot.waits.is_some()).min_by_key(|slot| slot.waits) else {
            return false;
        };
        slot.waits = None;
        slot.close.notify_one();
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u64, Slot>> {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Takes connection `id` out of the slots however its task ends (also when
/// aborted).
struct Leaves<'a>(&'a Slots, u64);

impl Drop for Leaves<'_> {
    fn drop(&mut self) {
        self.0.closed(self.1);
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    webhooks: Arc<Webhooks>,
    mut stopped: watch::Receiver<bool>,
) {
    // Dropped at the end: every connection task is aborted with it.
    let mut connections = JoinSet::new();
    let slots = Arc::new(Slots::default());
    let mut next_id = 0u64;
    loop {
        let full = connections.len() >= MAX_CONNECTIONS;
        tokio::select! {
            _ = stopped.changed() => return,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            // Full and every connection busy: new ones wait in the listen
            // backlog until one ends or begins to wait for a request.
            () = slots.idle.notified(), if full => {}
            accepted = listener.accept(), if !full || slots.any_waits() => {
                let (tcp, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: wait rather than spin.
                        tracing::warn!(error = %e, "webhook server: accepting a connection failed");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    }
                };
                // Full: a connection that waits for a request makes room.
                // (One may have got busy since the accept was allowed: then
                // this one waits as those in the backlog do.)
                while connections.len() >= MAX_CONNECTIONS && !slots.make_room() {
                    tokio::select! {
                        _ = stopped.changed() => return,
                        Some(_) = connections.join_next() => {}
                        () = slots.idle.notified() => {}
                    }
                }
                let (acceptor, webhooks, slots) = (acceptor.clone(), webhooks.clone(), slots.clone());
                let id = next_id;
                next_id += 1;
                let close = slots.open(id);
                connections.spawn(async move {
                    let _leaves = Leaves(&slots, id);
                    let handshake = tokio::time::timeout(std::time::Duration::from_secs(10), acceptor.accept(tcp));
                    let tls = tokio::select! {
                        tls = handshake => match tls {
                            Ok(Ok(tls)) => tls,
                            Ok(Err(e)) => {
                                tracing::debug!(%peer, error = %e, "webhook TLS handshake failed");
                                return;
                            }
                            Err(_) => return,
                        },
                        () = close.notified() => return,
                    };
                    if let Err(e) = serve_connection(Connection::new(tls), webhooks, &slots, id, &close).await {
                        tracing::debug!(%peer, error = %e, "webhook connection ended");
                    }
                });
            }
        }
    }
}

async fn serve_connection<S>(
    mut conn: Connection<S>,
    webhooks: Arc<Webhooks>,
    slots: &Slots,
    id: u64,
    close: &tokio::sync::Notify,
) -> io::Result<()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut answered = false;
    loop {
        // Waiting for a request, the connection may be closed to make room.
        slots.waits(id, answered);
        let more = tokio::select! {
            more = conn.wait_for_request() => more?,
            () = close.notified() => false,
        };
        if !more {
            break;
        }
        slots.busy(id);
        answered = true;
        let request = match conn.next_request().await {
            Ok(Some(request)) => request,
            Ok(None) => break,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                let status = if super::http1::is_too_large(&e) { 413 } else { 400 };
                let response = Response { status, content_type: "text/plain", body: e.to_string().into_bytes() };
                conn.respond(&response, true).await?;
                break;
            }
            Err(e) => return Err(e),
        };
        let close = request.close;
        // The handlers are the user's synchronous code (a big conversion
        // batch, a slow check): off the async workers.
        let webhooks = webhooks.clone();
        let answer =
            tokio::task::spawn_blocking(move || webhooks.handle(&request.method, &request.path, &request.body))
                .await
                .unwrap_or_else(|e| super::WebhookResponse::error(500, format!("the webhook handler panicked: {e}")));
        let response = Response { status: answer.status, content_type: answer.content_type, body: answer.body };
        conn.respond(&response, close).await?;
        if close {
            break;
        }
    }
    conn.shutdown().await
}
