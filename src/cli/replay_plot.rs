//! `kalah replay --plot FILE.svg`: a replayed game as an evaluation graph.
//!
//! ```text
//!   value for South
//!    +8 ┤ ●──●──●
//!       │         ╲        ▲ mistake: South lost 6 seeds
//!    +2 ┤          ●──●    (a red mark, its size written beside it)
//!       └──────────────── sowing
//! ```
//!
//! After every valued sowing, the exact value of the game for South (stores included, perfect
//! play from there on): the value of the sowing for its mover, seen from South. Exact values are
//! joined by a line; estimates (beyond the levels and the search) are grey points, not joined;
//! a mistake (an exact sowing below its position's best) is a red mark with its size; the
//! sowings of a match's random opening are drawn but marked as nobody's mistake.

use std::path::Path;

use plotters::prelude::*;

use kalah::Side;
use kalah::play::record::Record;

use super::CliError;
use super::replay_ply::Ply;

/// Draws the plies of `record` into `path` (an SVG file), written whole.
pub(super) fn write(path: &Path, record: &Record, plies: &[Ply]) -> Result<(), CliError> {
    if path.extension().and_then(|e| e.to_str()) != Some("svg") {
        return Err(CliError::input(format!(
            "--plot {}: the plot is an SVG file, its name ending in .svg",
            path.display()
        )));
    }
    let svg = draw(record, plies).map_err(|e| CliError::failure(format!("cannot draw: {e}")))?;
    kalah::files::write_whole(path, |f| std::io::Write::write_all(f, svg.as_bytes()))
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
}

/// (sowing number, value for South, exact, mistake in seeds) of each valued sowing; the
/// sowings of a match's random opening (`opening`) are nobody's mistakes.
fn points(plies: &[Ply], opening: usize) -> Vec<(i32, i32, bool, i32)> {
    plies
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let v = p.valuation.as_ref()?;
            let south = if p.side == Side::South {
                v.value
            } else {
                -v.value
            };
            let exact = v.source != "estimate";
            let mistake = if i < opening { 0 } else { v.best - v.value };
            Some((i as i32 + 1, south, exact, mistake))
        })
        .collect()
}

fn draw(record: &Record, plies: &[Ply]) -> Result<String, Box<dyn std::error::Error>> {
    let pts = points(plies, record.opening);
    let n = plies.len().max(1) as i32;
    let top = pts.iter().map(|p| p.1.abs()).max().unwrap_or(0).max(4) + 2;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let r = record.rules;
        let title = format!(
            "{r}: South {} against North {}, the value for South after each sowing",
            record.south, record.north
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(44)
            .build_cartesian_2d(0..n + 1, -top..top)?;
        chart
            .configure_mesh()
            .x_desc("sowing")
            .y_desc("value for South (stores included)")
            .draw()?;
        chart.draw_series(LineSeries::new(
            [(0, 0), (n + 1, 0)],
            RGBColor(160, 160, 160).stroke_width(1),
        ))?;
        let exact: Vec<(i32, i32)> = pts.iter().filter(|p| p.2).map(|p| (p.0, p.1)).collect();
        chart
            .draw_series(LineSeries::new(exact.iter().copied(), BLUE.stroke_width(2)))?
            .label("exact value")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLUE.stroke_width(2)));
        chart.draw_series(
            exact
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 2, BLUE.filled())),
        )?;
        chart
            .draw_series(
                pts.iter()
                    .filter(|p| !p.2)
                    .map(|p| Circle::new((p.0, p.1), 3, RGBColor(150, 150, 150).filled())),
            )?
            .label("estimate (not exact)")
            .legend(|(x, y)| Circle::new((x + 8, y), 3, RGBColor(150, 150, 150).filled()));
        let mistakes: Vec<_> = pts.iter().filter(|p| p.2 && p.3 > 0).collect();
        chart
            .draw_series(
                mistakes
                    .iter()
                    .map(|p| TriangleMarker::new((p.0, p.1), 6, RED.filled())),
            )?
            .label("mistake (seeds lost)")
            .legend(|(x, y)| TriangleMarker::new((x + 8, y), 5, RED.filled()));
        chart.draw_series(mistakes.iter().map(|p| {
            Text::new(
                format!("-{}", p.3),
                (p.0, p.1 + top / 12 + 1),
                ("sans-serif", 12).into_font().color(&RED),
            )
        }))?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}
