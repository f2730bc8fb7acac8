import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env['WEBHOOK_SECRET'] ?? ''); // whsec_... from the console or `campus webhooks create`
const port = Number(process.env['PORT'] ?? 3000);
createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const event = webhook.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>) as {
        id: string;
        type: string;
      };
      console.log(`${event.id} ${event.type}`); // a repeat has the same webhook-id: drop it if you have seen it
      res.writeHead(204).end();
    } catch {
      res.writeHead(400).end('bad signature');
    }
  });
}).listen(port, '127.0.0.1', () => console.log(`webhook-receiver: listening on http://127.0.0.1:${port}/`));
