//! `usage:*`: what each key spends, from the usage ledger.

use keypool_store::usage::Price;

use crate::ipc::*;
use crate::AppContext;

type Result<T> = std::result::Result<T, IpcError>;

pub fn summary(ctx: &AppContext, a: UsageSummaryArgs) -> Result<UsageSummaryDto> {
    Ok(ctx.usage()?.summary(a.provider_id.as_deref(), a.from, a.to)?.into())
}

pub fn series(ctx: &AppContext, a: UsageSeriesArgs) -> Result<SeriesDto> {
    let points = ctx.usage()?.series(a.provider_id.as_deref(), a.key_id.as_deref(), a.bucket.into(), a.from, a.to)?;
    Ok(SeriesDto { from: a.from, to: a.to, points: points.into_iter().map(Into::into).collect() })
}

pub async fn export_csv(ctx: &AppContext, a: ExportUsageArgs) -> Result<ExportResult> {
    Ok(ctx.usage()?.export_csv(a.provider_id.as_deref(), a.from, a.to).await?.into())
}

pub fn prices(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<PriceDto>> {
    Ok(ctx.usage()?.prices()?.into_iter().map(Into::into).collect())
}

pub fn set_price(ctx: &AppContext, a: SetPriceArgs) -> Result<PriceDto> {
    let price = Price {
        model: a.model.trim().to_owned(),
        input_per_million: a.input_per_million,
        cached_per_million: a.cached_input_per_million,
        output_per_million: a.output_per_million,
        updated_at: 0,
    };
    Ok(ctx.usage()?.set_price(price)?.into())
}

pub fn delete_price(ctx: &AppContext, ModelArgs { model }: ModelArgs) -> Result<ModelArgsEcho> {
    ctx.usage()?.delete_price(&model)?;
    Ok(ModelArgsEcho { model })
}

pub fn purge(ctx: &AppContext, a: PurgeUsageArgs) -> Result<Purged> {
    Ok(Purged { attempts: ctx.usage()?.purge(a.before)? })
}
