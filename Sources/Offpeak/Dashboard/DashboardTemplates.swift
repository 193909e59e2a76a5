import Mustache

/// The dashboard's pages and their style sheet. `{{x}}` escapes what it prints (every text that
/// came from a spec, a provider or a page is printed so); `{{{chart}}}` alone is printed as it is:
/// the SVG `SpendChart` draws from numbers and dates.
enum DashboardTemplates {
    /// The top of every page.
    static let head = """
        <!doctype html>
        <html lang="en">
        {{#head}}<head>
        <meta charset="utf-8">
        {{#refresh}}<meta http-equiv="refresh" content="{{refresh}}">{{/refresh}}
        <title>offpeak: {{title}}</title>
        <link rel="stylesheet" href="/style.css">
        </head>
        <body>
        <header><h1><a href="/">offpeak</a></h1><p id="workspace">{{workspace}}</p><p id="now">{{now}}</p>
        <nav><a href="/#now">now</a> <a href="/#runs">runs</a> <a href="/#queue">waiting</a>
        <a href="/#money">money</a> <a href="/#cache">cache</a> <a href="/#hosts">hosts</a></nav></header>{{/head}}

        """

    static let foot = """
        <footer><p>JSON: <a href="/api/status.json">status</a> <a href="/api/queue.json">queue</a>
        <a href="/api/costs.json">costs</a> <a href="/api/cache.json">cache</a>
        <a href="/api/hosts.json">hosts</a></p></footer>
        </body>
        </html>

        """

    /// A table of spend: by job, model or tag.
    static let costTable = """
        <table id="{{id}}"><thead><tr><th>{{key}}</th><th>calls</th><th>cost</th><th>naive</th><th>saved</th></tr></thead>
        <tbody>
        {{#lines}}<tr><td>{{key}}</td><td>{{calls}}</td><td>{{dollars}}</td><td>{{naive}}</td><td>{{saved}}</td></tr>
        {{/lines}}
        {{^lines}}<tr><td colspan="5">no calls yet</td></tr>{{/lines}}
        </tbody></table>

        """

    static let page = """
        {{> head}}
        <section id="now"><h2>Now</h2>
        <p id="conditions">{{conditions}}</p>
        <p>spent today: <span id="spent-today">{{spentToday}}</span></p>
        {{#budgets}}<p class="budget">{{.}}</p>
        {{/budgets}}
        {{#scheduleTable}}<table id="schedules"><thead><tr><th>scheduled job</th><th>cron</th><th>next due</th><th>last fired</th></tr></thead>
        <tbody>
        {{#rows}}<tr><td>{{job}}</td><td>{{cron}}</td><td>{{next}}</td><td>{{last}}</td></tr>
        {{/rows}}
        </tbody></table>{{/scheduleTable}}
        </section>
        <section id="runs"><h2>Runs</h2>
        <table><thead><tr><th>job</th><th>run</th><th>state</th><th>items</th><th>calls</th><th>cost</th><th>why</th></tr></thead>
        <tbody>
        {{#runs}}<tr><td>{{job}}</td><td><a href="/runs/{{id}}">{{id}}</a></td><td>{{state}}</td>
        <td><progress max="100" value="{{percent}}">{{percent}} %</progress> {{items}}</td><td>{{calls}}</td><td>{{dollars}}</td><td>{{why}}</td></tr>
        {{/runs}}
        {{^runs}}<tr><td colspan="7">no runs yet</td></tr>{{/runs}}
        </tbody></table>
        </section>
        <section id="queue"><h2>Waiting</h2>
        <table id="deferred"><thead><tr><th>job</th><th>since</th><th>on</th><th>items</th><th>why</th></tr></thead>
        <tbody>
        {{#waiting}}<tr><td>{{job}}</td><td>{{since}}</td><td>{{host}}</td><td>{{items}}</td><td>{{why}}</td></tr>
        {{/waiting}}
        {{^waiting}}<tr><td colspan="5">nothing waits for its conditions</td></tr>{{/waiting}}
        </tbody></table>
        {{#retryTable}}<table id="retrying"><thead><tr><th>job</th><th>item</th><th>attempts</th><th>next attempt</th><th>last error</th></tr></thead>
        <tbody>
        {{#rows}}<tr><td>{{job}}</td><td>{{item}}</td><td>{{attempts}}</td><td>{{next}}</td><td>{{error}}</td></tr>
        {{/rows}}
        </tbody></table>{{/retryTable}}
        </section>
        <section id="money"><h2>Money</h2>
        <p class="span">{{#spans}}{{#current}}<strong>{{days}} days</strong>{{/current}}{{^current}}<a href="/?days={{days}}#money">{{days}} days</a>{{/current}} {{/spans}}</p>
        {{{chart}}}
        <p class="legend"><span class="spent">spent</span> <span class="naive">the naive way</span> <span id="chart-note">{{chartNote}}</span></p>
        {{#waitingSaved}}<p id="waiting-saved">{{.}}</p>{{/waitingSaved}}
        <h3>by job</h3>
        {{#byJob}}{{> costTable}}{{/byJob}}
        <h3>by model</h3>
        {{#byModel}}{{> costTable}}{{/byModel}}
        {{#byTag}}<h3>by tag</h3>
        {{> costTable}}{{/byTag}}
        </section>
        <section id="cache"><h2>Cache</h2>
        <table id="cache-stats"><tbody>
        {{#cache}}<tr><th>{{name}}</th><td>{{value}}</td></tr>
        {{/cache}}
        </tbody></table>
        </section>
        <section id="hosts"><h2>Hosts</h2>
        <table><thead><tr><th>host</th><th>version</th><th>last tick</th><th>exit</th><th>runs held</th><th>calls in flight</th><th>conditions</th></tr></thead>
        <tbody>
        {{#hosts}}<tr><td>{{name}}</td><td>{{version}}</td><td>{{tick}}</td><td>{{status}}</td><td>{{runsHeld}}</td><td>{{callsInFlight}}</td><td>{{conditions}}</td></tr>
        {{/hosts}}
        {{^hosts}}<tr><td colspan="7">no host has ticked yet</td></tr>{{/hosts}}
        </tbody></table>
        </section>
        {{> foot}}
        """

    /// A run's page.
    static let run = """
        {{> head}}
        <section id="run"><h2>Run <span id="run-id">{{id}}</span></h2>
        <table id="run-facts"><tbody>
        {{#facts}}<tr><th>{{name}}</th><td>{{value}}</td></tr>
        {{/facts}}
        </tbody></table>
        <p><progress max="100" value="{{percent}}">{{percent}} %</progress> {{items}}</p>
        </section>
        <section id="states"><h2>Requests by state</h2>
        <table><thead><tr><th>state</th><th>count</th><th>first</th></tr></thead>
        <tbody>
        {{#states}}<tr><td>{{state}}</td><td>{{count}}</td><td><ul>{{#first}}<li><span class="item">{{name}}</span>{{#error}}: <span class="error">{{.}}</span>{{/error}}</li>{{/first}}{{#more}}<li>and {{.}} more</li>{{/more}}</ul></td></tr>
        {{/states}}
        {{^states}}<tr><td colspan="3">no requests yet</td></tr>{{/states}}
        </tbody></table>
        </section>
        <section id="batches"><h2>Provider batches out</h2>
        <table><thead><tr><th>batch</th><th>provider id</th><th>provider state</th><th>progress</th><th>submitted</th></tr></thead>
        <tbody>
        {{#batches}}<tr><td>{{id}}</td><td>{{remote}}</td><td>{{status}}</td><td>{{progress}}</td><td>{{submitted}}</td></tr>
        {{/batches}}
        {{^batches}}<tr><td colspan="5">none</td></tr>{{/batches}}
        </tbody></table>
        </section>
        <section id="audits"><h2>Batch audit</h2>
        <table><thead><tr><th>model</th><th>agreed at the tail by size</th><th>now</th><th>answers</th></tr></thead>
        <tbody>
        {{#audits}}<tr><td>{{model}}</td><td>{{agreed}}</td><td>{{now}}</td><td>{{answers}}</td></tr>
        {{/audits}}
        {{^audits}}<tr><td colspan="4">the job's batched answers have not been audited</td></tr>{{/audits}}
        </tbody></table>
        </section>
        <section id="outputs"><h2>Outputs</h2>
        {{#outputs}}<p>folder <code id="output-folder">{{folder}}</code>; <code>{{index}}</code> names each item's file{{#digest}}; digest <code>{{.}}</code>{{/digest}}</p>{{/outputs}}
        {{^outputs}}<p>the run keeps no spec that says where its outputs go</p>{{/outputs}}
        <p>JSON: <a href="/api/run.json?id={{id}}">this run</a></p>
        </section>
        {{> foot}}
        """

    static let error = """
        <!doctype html>
        <html lang="en">
        <head><meta charset="utf-8"><title>offpeak: {{title}}</title>
        <link rel="stylesheet" href="/style.css"></head>
        <body><h1>offpeak</h1><p id="error">{{message}}</p></body>
        </html>

        """

    static let style = """
        body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1100px; }
        header { display: flex; gap: 1em; align-items: baseline; }
        h1 { font-size: 1.4em; margin: 0; } h2 { font-size: 1.1em; margin: 1.2em 0 0.4em; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; vertical-align: top; }
        .chart { width: 100%; height: auto; max-width: 720px; }
        .chart polyline { fill: none; stroke-width: 2; }
        .chart polyline.spent, .chart circle.spent { stroke: #1f6feb; fill: none; }
        .chart polyline.naive { stroke: #bbb; stroke-dasharray: 4 3; }
        .chart text { font-size: 11px; fill: #666; }
        .legend .spent { color: #1f6feb; } .legend .naive { color: #999; }
        pre { background: #f6f6f6; padding: 0.6em; }
        nav { margin-left: auto; } nav a { margin-left: 0.5em; }
        h1 a { color: inherit; text-decoration: none; }
        h3 { font-size: 1em; margin: 1em 0 0.3em; }
        td ul { margin: 0; padding-left: 1.1em; } .error { color: #a33; }
        #cache-stats, #run-facts { width: auto; } #cache-stats th, #run-facts th { font-weight: normal; color: #666; }

        """

    static let templates: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in [
            ("head", head), ("foot", foot), ("costTable", costTable), ("page", page), ("run", run),
            ("error", error),
        ] {
            try? library.register(text, named: name)
        }
        return library
    }()

    /// `model` in the template `name`; the templates are this file's, so they always parse.
    static func render(_ model: Any, _ name: String) -> String {
        templates.render(model, withTemplate: name) ?? ""
    }
}
