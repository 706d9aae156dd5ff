-- (g) Only the statement that makes a group's data (the first statement of b and c): what it
-- costs PostgreSQL is not Herald's (Herald's worker sends these arrays as parameters), so
-- run.sh reports it, to subtract from b and c if one wants to. One run = one group of 16.
\set base random(1, 400000000000000000)
SELECT array_agg(m) AS mids, array_agg(v) AS vids, array_agg(t) AS toks, array_agg(p) AS phones,
       array_agg(left(p, 11)) AS pfx, array_agg(left(p, 8)) AS fpfx, array_agg(h) AS hashes,
       array_agg(encode(h, 'hex')) AS khash, array_agg(pm) AS pmids,
       array_agg('{"verification_id":"' || v || '","phone":"+49*******' || right(p, 3)
                 || '","purpose":"sign_in","provider":"webhook","provider_message_id":"' || pm
                 || '","segments":1,"encoding":"gsm7","channel":"sms"}') AS bodies
  FROM (SELECT 'b1a7e0c2-' || lpad(n::text, 27, '0') AS m, 'c2f9d3a4-' || lpad(n::text, 27, '0') AS v,
               'e5a1b7c9-' || lpad(n::text, 27, '0') AS t,
               '+4917' || lpad((((n % 1000000000) * 2654435761) % 1000000000)::text, 9, '0') AS p,
               sha256(int8send(n)) AS h, 'SM' || lpad(n::text, 32, '0') AS pm
          FROM (SELECT :base::bigint * 16 + g AS n FROM generate_series(1, 16) AS g) AS s) AS d \gset
