//! A TCP proxy on loopback for partition tests: between clients (or a
//! controller given `--master` with its URL) and kube-apiserver, it takes
//! the link down or black-holes it.

use anyhow::Result;

/// What the proxy does with connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// Bytes flow.
    Up,
    /// Open connections are closed; new ones are closed at once.
    Down,
    /// Open and new connections stay open and forward nothing, ever (also
    /// after the link is up again): a partition that swallowed the close.
    Blackhole,
}

/// A TCP proxy on loopback between clients and kube-apiserver.
#[derive(Debug)]
pub struct Proxy {
    port: u16,
    link: tokio::sync::watch::Sender<Link>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream` on
    /// loopback, link up. Must be called inside a Tokio runtime.
    pub async fn start(upstream: u16) -> Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let (link, _) = tokio::sync::watch::channel(Link::Up);
        let links = link.clone();
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                let mut state = links.subscribe();
                connections.spawn(async move {
                    let now = *state.borrow_and_update();
                    match now {
                        Link::Down => return,
                        Link::Blackhole => {
                            // Open and silent, for good.
                            let _held = client;
                            return std::future::pending().await;
                        }
                        Link::Up => {}
                    }
                    let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await else { return };
                    forward(client, server, state).await;
                });
            }
        });
        Ok(Self { port, link, task })
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://127.0.0.1:<port>`: the API server's URL through the proxy
    /// (its certificate is valid for any port of 127.0.0.1).
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// Changes what happens to connections, from now on.
    pub fn set(&self, link: Link) {
        self.link.send_replace(link);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Copies bytes both ways until either side closes or the link goes down;
/// a blackhole keeps both sockets open and silent for good.
async fn forward(
    mut client: tokio::net::TcpStream,
    mut server: tokio::net::TcpStream,
    mut link: tokio::sync::watch::Receiver<Link>,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (mut from_client, mut from_server) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        tokio::select! {
            read = client.read(&mut from_client) => match read {
                Ok(n) if n > 0 && server.write_all(&from_client[..n]).await.is_ok() => {}
                _ => return,
            },
            read = server.read(&mut from_server) => match read {
                Ok(n) if n > 0 && client.write_all(&from_server[..n]).await.is_ok() => {}
                _ => return,
            },
            changed = link.changed() => match (changed.is_ok(), current(&mut link)) {
                (false, _) | (_, Link::Down) => return,
                (_, Link::Blackhole) => {
                    std::future::pending::<()>().await;
                }
                (_, Link::Up) => {}
            },
        }
    }
}

/// The link's state now (the guard is not held across an await).
fn current(link: &mut tokio::sync::watch::Receiver<Link>) -> Link {
    *link.borrow_and_update()
}
