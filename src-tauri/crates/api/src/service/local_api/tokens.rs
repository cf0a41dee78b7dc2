//! Named tokens of the app's local API: one per agent, script or person, each shown once when it
//! is made, kept as its SHA-256 only, and revoked alone. The ledger records each request under
//! its token's name, so the Usage page can say who spent what.
//!
//! They are rows of the store's members (`keypool-server`'s, made by hand: source `cli`), so a
//! server opened on the same store knows them too. The app's endpoint serves them without
//! limits: a member's limits are a server's to enforce.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use keypool::Clock;
use keypool_gateway::{token_hash, Asked, Limit, Members as GatewayMembers, Pass, Refusal};
use keypool_store::{members as rows, Database};

use crate::service::error::{Result, ServiceError};
use crate::service::members::{from_row, valid_name, Member, MemberLimits, MemberSource};
use crate::service::problem::Rule;

/// A named token as the app shows it: never its value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct NamedToken {
    pub name: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// When the ledger last recorded a request it sent (milliseconds); `None`: never (or its
    /// history was purged).
    pub last_used_at: Option<i64>,
    /// Whether it is served: a server sharing this store may have disabled it or let it expire.
    pub usable: bool,
}

/// The named tokens, and what the endpoint serves of them: a lookup by hash, read again from the
/// store after every change made here.
pub struct NamedTokens {
    db: Arc<Database>,
    clock: Arc<dyn Clock>,
    /// Each usable token's hash, to its name.
    served: RwLock<HashMap<[u8; 32], Arc<str>>>,
}

impl NamedTokens {
    pub(crate) fn new(db: Arc<Database>, clock: Arc<dyn Clock>) -> NamedTokens {
        let tokens = NamedTokens { db, clock, served: RwLock::default() };
        if let Err(error) = tokens.reload() {
            tracing::error!(%error, "the local API's named tokens cannot be read; none is served");
        }
        tokens
    }

    fn members(&self) -> Result<Vec<Member>> {
        Ok(rows::list(&*self.db.lock()?)?.into_iter().filter_map(from_row).collect())
    }

    fn usable(&self, member: &Member) -> bool {
        member.enabled && member.expires_at.is_none_or(|at| at > self.clock.now().as_millis())
    }

    /// Reads the store's tokens again into what the endpoint serves.
    fn reload(&self) -> Result<()> {
        let served = self
            .members()?
            .into_iter()
            .filter(|m| self.usable(m))
            .map(|m| (m.token_sha256, Arc::from(m.name.as_str())))
            .collect();
        *self.served.write().unwrap_or_else(|e| e.into_inner()) = served;
        Ok(())
    }

    /// Every named token, by name, with when it was last used.
    pub fn list(&self) -> Result<Vec<NamedToken>> {
        let members = self.members()?;
        let conn = self.db.lock()?;
        members
            .into_iter()
            .map(|member| {
                Ok(NamedToken {
                    last_used_at: rows::last_used(&conn, &member.name)?,
                    usable: self.usable(&member),
                    name: member.name,
                    created_at: member.created_at,
                })
            })
            .collect()
    }

    /// Makes a token called `name` (1 to 64 of `A-Z a-z 0-9 . _ - @`, unique in any case) and
    /// returns it with its value, this once. It serves at once.
    pub fn create(&self, name: &str) -> Result<(NamedToken, String)> {
        let name = name.trim();
        if !valid_name(name) {
            return Err(ServiceError::invalid("name", Rule::BadTokenName));
        }
        let token = super::new_token_value();
        let now = self.clock.now().as_millis();
        let member = Member {
            name: name.to_owned(),
            token_sha256: token_hash(&token),
            source: MemberSource::Cli,
            enabled: true,
            expires_at: None,
            limits: MemberLimits::default(),
            created_at: now,
            updated_at: now,
        };
        {
            let mut conn = self.db.lock()?;
            if rows::get(&conn, name)?.is_some() {
                return Err(ServiceError::invalid("name", Rule::TokenNameTaken));
            }
            rows::put(&mut conn, &crate::service::members::to_row(&member))?;
        }
        self.reload()?;
        tracing::info!(name, "a named local API token was made");
        let made = NamedToken { name: member.name, created_at: now, last_used_at: None, usable: true };
        Ok((made, token))
    }

    /// Revokes the token called `name` (in any case): it stops serving at once. What it spent
    /// stays in the ledger under its name.
    pub fn revoke(&self, name: &str) -> Result<()> {
        let now = self.clock.now().as_millis();
        let deleted = rows::delete(&mut *self.db.lock()?, name, now)?;
        self.reload()?;
        match deleted {
            true => {
                tracing::info!(name, "a named local API token was revoked");
                Ok(())
            }
            false => Err(ServiceError::not_found("token", name)),
        }
    }
}

impl GatewayMembers for NamedTokens {
    fn identify(&self, hash: &[u8; 32]) -> Option<std::result::Result<Arc<str>, Refusal>> {
        self.served.read().unwrap_or_else(|e| e.into_inner()).get(hash).cloned().map(Ok)
    }

    fn admit<'a>(
        &'a self,
        member: &'a str,
        _asked: Asked<'a>,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<Pass, Refusal>> + Send + 'a>> {
        // Revoked while the request was read: refused as a revoked token is.
        let served = self.served.read().unwrap_or_else(|e| e.into_inner()).values().any(|n| &**n == member);
        Box::pin(async move {
            match served {
                true => Ok(Pass::free()),
                false => Err(Refusal {
                    limit: Limit::Revoked,
                    message: format!("the token {member:?} was revoked"),
                    retry_after: None,
                }),
            }
        })
    }

    fn lists(&self, _member: &str, _model: &str) -> bool {
        true
    }
}
